// The lab's hook for a NoCloud seed given from outside (the multipass test stand-in): the seed
// replaces the lab's meta-data and user-data, adds vendor-data, and is private; nothing else moves.
import { describe, expect, it } from 'vitest';
import { machineFiles } from '../../src/lab/machine-config.ts';
import { planLab } from '../../src/lab/plan.ts';

const plan = planLab({ name: 'dev', servers: 1, workers: 1, subnet: '10.240.0.0/24', dir: '/srv/lab' });
const node0 = plan.machines[1]!;
const SEED = 'var/lib/cloud/seed/nocloud/';
const seedOf = (files: ReturnType<typeof machineFiles>) =>
  Object.fromEntries(files.filter((f) => f.path.startsWith(SEED)).map((f) => [f.path.slice(SEED.length), [f.content, f.mode]]));

describe('lab machine files with a seed from outside', () => {
  it('without a seed: the lab\'s own meta-data and user-data, readable, and no vendor-data', () => {
    const seed = seedOf(machineFiles('dev', node0, 24, 'ssh-ed25519 AAAA k'));
    expect(Object.keys(seed).sort()).toEqual(['meta-data', 'user-data']);
    expect(seed['meta-data']).toEqual(['instance-id: hardway-dev-node-0\nlocal-hostname: node-0\n', 0o644]);
    expect(seed['user-data']![0]).toMatch(/^manage_etc_hosts: true$/m);
  });

  it('with a seed: its meta-data, user-data and vendor-data, each 0600, and every other file as before', () => {
    const given = { metaData: 'instance-id: vm1\nlocal-hostname: vm1\n', userData: '#cloud-config\nssh_keys: {}\n', vendorData: '#cloud-config\n{}\n' };
    const files = machineFiles('dev', node0, 24, 'ssh-ed25519 AAAA k', given);
    expect(seedOf(files)).toEqual({
      'meta-data': [given.metaData, 0o600],
      'user-data': [given.userData, 0o600],
      'vendor-data': [given.vendorData, 0o600],
    });
    const others = (f: ReturnType<typeof machineFiles>) => f.filter((x) => !x.path.startsWith(SEED));
    expect(others(files)).toEqual(others(machineFiles('dev', node0, 24, 'ssh-ed25519 AAAA k')));
  });

  it('a seed without vendor-data writes none', () => {
    const files = machineFiles('dev', node0, 24, 'k', { metaData: 'instance-id: a\n', userData: '#cloud-config\n' });
    expect(Object.keys(seedOf(files)).sort()).toEqual(['meta-data', 'user-data']);
  });
});
