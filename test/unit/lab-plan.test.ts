// The lab's layout from `lab up` options: names, addresses, pod subnets, and refused inputs.
import { describe, expect, it } from 'vitest';
import { InputError } from '../../src/errors.ts';
import { findMachine, planLab, serverNames } from '../../src/lab/plan.ts';
import { bridgeName, defaultDir, unitName } from '../../src/lab/names.ts';

const spec = (over: Partial<Parameters<typeof planLab>[0]> = {}) =>
  ({ name: 'dev', servers: 1, workers: 2, subnet: '10.240.0.0/24', dir: '/tmp/x', ...over });

describe('planLab', () => {
  it('lays out one server at .10 and workers from .20 with pod subnets 10.200.N.0/24', () => {
    const plan = planLab(spec());
    expect(plan.machines.map((m) => [m.hostname, m.fqdn, m.ip, m.role, m.podSubnet])).toEqual([
      ['server', 'server.kubernetes.local', '10.240.0.10', 'control-plane', undefined],
      ['node-0', 'node-0.kubernetes.local', '10.240.0.20', 'worker', '10.200.0.0/24'],
      ['node-1', 'node-1.kubernetes.local', '10.240.0.21', 'worker', '10.200.1.0/24'],
    ]);
    expect(plan.bridge).toBe('hw-dev');
    expect(plan.bridgeAddress).toBe('10.240.0.1/24');
  });

  it('names several servers server-0, server-1 and keeps nspawn machine names unique per lab', () => {
    expect(serverNames(1)).toEqual(['server']);
    expect(serverNames(3)).toEqual(['server-0', 'server-1', 'server-2']);
    const plan = planLab(spec({ servers: 2, workers: 0, subnet: '10.240.7.0/24' }));
    expect(plan.machines.map((m) => [m.hostname, m.ip, m.unit])).toEqual([
      ['server-0', '10.240.7.10', 'dev-server-0'],
      ['server-1', '10.240.7.11', 'dev-server-1'],
    ]);
    expect(unitName('other', 'server-0')).not.toBe(plan.machines[0]!.unit);
  });

  it('fits 16 machines in a /24 and keeps interface names within 15 characters', () => {
    const plan = planLab(spec({ name: 'abcdefghijkl', workers: 15 }));
    expect(plan.machines).toHaveLength(16);
    expect(plan.machines.at(-1)!.ip).toBe('10.240.0.34');
    expect(bridgeName('abcdefghijkl').length).toBeLessThanOrEqual(15);
  });

  it.each([
    [{ name: 'Bad_Name' }, /lab name "Bad_Name" is not allowed/],
    [{ name: 'thirteen-char' }, /is not allowed/],
    [{ servers: 0 }, /--servers must be a whole number from 1 to 10/],
    [{ servers: 11 }, /--servers must be a whole number from 1 to 10/],
    [{ workers: -1 }, /--workers must be a whole number from 0 to 200/],
    [{ subnet: '10.240.0.5/24' }, /host bits set/],
    [{ subnet: '10.240.0.0' }, /not in CIDR form/],
    [{ subnet: '10.240.0.0/28' }, /too small for 1 server\(s\) and 2 worker\(s\)/],
  ])('refuses %o as an input error', (over, message) => {
    let err: unknown;
    try {
      planLab(spec(over));
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(InputError);
    expect((err as InputError).exitCode).toBe(2);
    expect((err as Error).message).toMatch(message);
  });

  it('suggests the network that was meant when host bits are set', () => {
    expect(() => planLab(spec({ subnet: '10.240.0.5/24' }))).toThrow(expect.objectContaining({ hint: 'did you mean 10.240.0.0/24?' }));
  });

  it('finds machines by exact name and lists the known ones otherwise', () => {
    const plan = planLab(spec());
    expect(findMachine(plan, 'node-1').ip).toBe('10.240.0.21');
    expect(() => findMachine(plan, 'node-2')).toThrow(expect.objectContaining({ hint: 'did you mean "node-0" or "node-1"? its machines: server, node-0, node-1' }));
    expect(() => findMachine(plan, 'worker')).toThrow(expect.objectContaining({ hint: 'its machines: server, node-0, node-1' }));
  });

  it('writes the default lab to ./lab and other labs to ./lab-NAME', () => {
    expect(defaultDir('lab')).toBe('lab');
    expect(defaultDir('e2e')).toBe('lab-e2e');
  });
});
