// What `hardway multipass up` decides and writes, as data: the VMs of a spec, the user-data each
// gets (checked the way cloud-init reads it), DIR's files (read back by hardway's own parsers),
// which address goes into machines.txt, and the record.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { parseClusterSettings } from '../../src/cluster-settings.ts';
import { InputError } from '../../src/errors.ts';
import { parseInventory } from '../../src/inventory.ts';
import { addressChanges, pickAddress } from '../../src/multipass/addresses.ts';
import { generateHostKey } from '../../src/multipass/keys.ts';
import { defaultDir, defaultStateDir } from '../../src/multipass/names.ts';
import { checkDirIsOurs, clusterYaml, knownHosts, machinesTxt, machinesTxtAddresses, sshConfig, type AddressedVm } from '../../src/multipass/outputs.ts';
import { checkSpec, planVms } from '../../src/multipass/plan.ts';
import { listRecords, readRecord, resolvePrefix, writeRecord } from '../../src/multipass/record.ts';
import type { MultipassSpec } from '../../src/multipass/types.ts';
import { MARKER_FILE, parseMarker, userData } from '../../src/multipass/user-data.ts';

const spec: MultipassSpec = { prefix: 'k8s', servers: 1, workers: 2, image: '24.04', cpus: 2, memory: '2G', disk: '20G', dir: '/srv/k8s', timeoutS: 600 };
const vms: AddressedVm[] = planVms('k8s', 1, 2).map((v, i) => ({ ...v, ip: `192.168.64.${10 + i}`, hostKey: `ssh-ed25519 AAAAkey${i} root@${v.hostname}` }));

describe('planning', () => {
  it('names the VMs PREFIX-server, PREFIX-node-N with the lab\'s machine names and pod subnets', () => {
    expect(planVms('k8s', 1, 2)).toEqual([
      { vm: 'k8s-server', hostname: 'server', fqdn: 'server.kubernetes.local', role: 'control-plane' },
      { vm: 'k8s-node-0', hostname: 'node-0', fqdn: 'node-0.kubernetes.local', role: 'worker', podSubnet: '10.200.0.0/24' },
      { vm: 'k8s-node-1', hostname: 'node-1', fqdn: 'node-1.kubernetes.local', role: 'worker', podSubnet: '10.200.1.0/24' },
    ]);
    expect(planVms('k8s', 2, 0).map((v) => v.vm)).toEqual(['k8s-server-0', 'k8s-server-1']);
    expect(defaultDir('hardway')).toBe('multipass');
    expect(defaultDir('k8s')).toBe('multipass-k8s');
  });

  it('refuses what Multipass would refuse, as usage errors', () => {
    expect(() => checkSpec(spec)).not.toThrow();
    for (const [bad, message] of [
      [{ prefix: '1abc' }, /--name "1abc" is not allowed/], [{ prefix: 'Abc' }, /not allowed/], [{ prefix: 'a-' }, /not allowed/],
      [{ servers: 0 }, /--servers must be a whole number from 1 to 9/], [{ workers: 101 }, /--workers/],
      [{ memory: '2 GB' }, /--memory "2 GB" is not a size/], [{ disk: 'big' }, /--disk/], [{ image: 'a b' }, /--vm-image "a b"/],
    ] as const) {
      expect(() => checkSpec({ ...spec, ...bad }), JSON.stringify(bad)).toThrow(InputError);
      expect(() => checkSpec({ ...spec, ...bad })).toThrow(message);
    }
    for (const ok of ['512M', '1.5G', '2GiB', '2147483648']) expect(() => checkSpec({ ...spec, memory: ok })).not.toThrow();
  });
});

describe('user-data', () => {
  it('gives cloud-init the hostname, root\'s key, manage_etc_hosts, the host key pair and the marker', async () => {
    const hostKey = await generateHostKey('root@node-0');
    const rec = { ...vms[1]!, id: '0d6f-test', hostKey: hostKey.publicKey, launchedAt: 'now' };
    const text = userData('k8s', rec, 'ssh-ed25519 AAAAproject hardway-multipass-k8s', hostKey);
    expect(text.split('\n')[0]).toBe('#cloud-config');
    const c = parse(text) as Record<string, unknown> & { ssh_keys: Record<string, string>; write_files: Array<Record<string, string>> };
    expect(c).toMatchObject({
      hostname: 'node-0', fqdn: 'node-0.kubernetes.local', manage_etc_hosts: true, disable_root: false, ssh_deletekeys: true,
      ssh_authorized_keys: ['ssh-ed25519 AAAAproject hardway-multipass-k8s'],
    });
    expect(c.ssh_keys.ed25519_private).toBe(hostKey.privateKey);
    expect(c.ssh_keys.ed25519_private).toMatch(/^-----BEGIN OPENSSH PRIVATE KEY-----\n[\s\S]+-----END OPENSSH PRIVATE KEY-----\n$/);
    expect(c.ssh_keys.ed25519_public).toBe(`${hostKey.publicKey}\n`);
    expect(c.write_files).toEqual([{ path: MARKER_FILE, permissions: '0644', owner: 'root:root', content: expect.any(String) }]);
    expect(parseMarker(c.write_files[0]!.content!)).toEqual({ prefix: 'k8s', vm: 'k8s-node-0', id: '0d6f-test' });
    // The public key stays one line: long lines are not folded.
    expect(text).toContain(`ed25519_public: |\n    ${hostKey.publicKey}\n`);
  });
});

describe('DIR\'s files', () => {
  it('machines.txt and cluster.yaml are what hardway inventory reads: root, the key and known_hosts beside them', () => {
    const text = machinesTxt('k8s', vms);
    expect(text).toBe('# Multipass "k8s" (hardway multipass up): IP FQDN HOSTNAME [POD_SUBNET]\n'
      + '192.168.64.10 server.kubernetes.local server\n192.168.64.11 node-0.kubernetes.local node-0 10.200.0.0/24\n'
      + '192.168.64.12 node-1.kubernetes.local node-1 10.200.1.0/24\n');
    const settings = parseClusterSettings(clusterYaml(undefined, 'k8s'), 'cluster.yaml');
    expect(settings.ssh).toMatchObject({ user: 'root', identityFile: 'id_ed25519', knownHosts: 'known_hosts' });
    const inv = parseInventory(text, settings, { file: '/srv/k8s/machines.txt', dir: '/srv/k8s', clusterFile: '/srv/k8s/cluster.yaml' });
    expect(inv.workers.map((w) => `${w.hostname} ${w.podSubnet}`)).toEqual(['node-0 10.200.0.0/24', 'node-1 10.200.1.0/24']);
    expect(machinesTxtAddresses(text)).toEqual(new Map([['server', '192.168.64.10'], ['node-0', '192.168.64.11'], ['node-1', '192.168.64.12']]));
  });

  it('cluster.yaml keeps the user\'s other settings and comments', () => {
    const mine = '# mine\nclusterCidr: 10.200.0.0/16\nssh:\n  port: 22\n';
    const out = clusterYaml(mine, 'k8s');
    expect(out).toContain('# mine');
    expect(parse(out)).toEqual({ clusterCidr: '10.200.0.0/16', ssh: { port: 22, user: 'root', identityFile: 'id_ed25519', knownHosts: 'known_hosts' } });
  });

  it('known_hosts pins each host key under address, hostname, FQDN and VM name; ssh_config is strict', () => {
    expect(knownHosts(vms).split('\n')[1]).toBe('192.168.64.11,node-0,node-0.kubernetes.local,k8s-node-0 ssh-ed25519 AAAAkey1');
    const cfg = sshConfig('k8s', vms, '/srv/my k8s');
    expect(cfg).toContain('Host node-0 node-0.kubernetes.local k8s-node-0 192.168.64.11\n  HostName 192.168.64.11\n  User root\n');
    expect(cfg).toContain('  IdentityFile "/srv/my k8s/id_ed25519"\n');
    expect(cfg).toContain('  UserKnownHostsFile "/srv/my k8s/known_hosts"\n  StrictHostKeyChecking yes\n');
  });

  it('refuses a directory whose machines.txt hardway multipass did not write, or wrote for another prefix', () => {
    const dir = mkdtempSync(join(tmpdir(), 'hardway-mp-dir-'));
    expect(() => checkDirIsOurs(dir, 'k8s')).not.toThrow();
    writeFileSync(join(dir, 'machines.txt'), machinesTxt('k8s', vms));
    expect(() => checkDirIsOurs(dir, 'k8s')).not.toThrow();
    expect(() => checkDirIsOurs(dir, 'other')).toThrow('belongs to Multipass "k8s", not "other"');
    writeFileSync(join(dir, 'machines.txt'), '10.0.0.1 a.example a\n');
    expect(() => checkDirIsOurs(dir, 'k8s')).toThrow(/exists and was not written by hardway multipass up/);
  });
});

describe('addresses', () => {
  it('keeps machines.txt\'s address while the VM still has it (a second address such as cni0 does not move it)', () => {
    expect(pickAddress(['192.168.64.10', '10.200.0.1'], '192.168.64.10')).toBe('192.168.64.10');
    expect(pickAddress(['10.200.0.1', '192.168.64.10'], '192.168.64.10')).toBe('192.168.64.10');
    expect(pickAddress(['192.168.64.20', '10.200.0.1'], '192.168.64.10')).toBe('192.168.64.20');
    expect(pickAddress(['192.168.64.20'], undefined)).toBe('192.168.64.20');
    expect(pickAddress([], undefined)).toBeUndefined();
  });

  it('names each VM whose address is not machines.txt\'s', () => {
    const inFile = new Map([['server', '192.168.64.10'], ['node-0', '192.168.64.99']]);
    expect(addressChanges(inFile, vms)).toEqual([{ vm: 'k8s-node-0', hostname: 'node-0', was: '192.168.64.99', now: '192.168.64.11' }]);
  });
});

describe('the record', () => {
  it('is kept per prefix under $HARDWAY_MULTIPASS_STATE, private, and found without --name when it is the only one', () => {
    expect(defaultStateDir({ HARDWAY_MULTIPASS_STATE: '/x' })).toBe('/x');
    expect(defaultStateDir({ XDG_STATE_HOME: '/st' })).toBe('/st/hardway/multipass');
    const dir = join(mkdtempSync(join(tmpdir(), 'hardway-mp-rec-')), 'state');
    expect(resolvePrefix(dir, undefined)).toBe('hardway');
    writeRecord(dir, { version: 1, prefix: 'k8s', dir: '/srv/k8s', servers: 1, workers: 2, vms: [] });
    expect(listRecords(dir)).toEqual(['k8s']);
    expect(resolvePrefix(dir, undefined)).toBe('k8s');
    expect(readRecord(dir, 'k8s')!.dir).toBe('/srv/k8s');
    expect(readFileSync(join(dir, 'k8s.json'), 'utf8')).toContain('"prefix": "k8s"');
    expect(() => resolvePrefix(dir, 'Bad!')).toThrow(InputError);
  });
});
