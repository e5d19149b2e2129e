// One probe per read: the kernel settings and containerd's images are read by one probe each, which
// the steps, verify and doctor all ask (no variant of its own in each).
import { describe, expect, it } from 'vitest';
import { pullRequests, requestsFor } from '../../src/doctor/batch.ts';
import { CACHED_PROBE } from '../../src/doctor/probes.ts';
import { PROBES } from '../../src/probes/index.ts';
import { images } from '../../src/probes/containerd.ts';
import { parseSysctls, sysctls } from '../../src/probes/system.ts';
import { WORKER_SYSCTLS } from '../../src/steps/support/components.ts';
import { recorded } from './doctor.helpers.ts';

const commandsOf = (pattern: RegExp) => [...PROBES.values()].filter((p) => {
  const args = [['a.b']];
  try {
    return pattern.test((p as unknown as { ask(...a: unknown[]): { cmd: { text: string } } }).ask(...args).cmd.text);
  } catch {
    return false;
  }
}).map((p) => p.name);

describe('one probe per read', () => {
  it('the registry has one probe that runs sysctl and one that lists images', () => {
    expect(commandsOf(/(^|[;&|] *)sysctl /)).toEqual(['sysctls']);
    expect(commandsOf(/ images ls/)).toEqual(['images']);
  });

  it("doctor asks the same sysctl and images probes as worker-os and verify", () => {
    const { ctx } = recorded('healthy');
    const worker = ctx.inventory.machines.find((m) => m.role === 'worker')!;
    const asked = requestsFor(ctx.inventory, worker, []).probes;
    expect(asked.sysctls!.of).toBe(sysctls);
    expect(pullRequests(ctx.inventory, worker, ['x/y:1']).probes[CACHED_PROBE]!.of).toBe(images);
  });

  it('reads sysctl lines by key, a key that does not exist left out', () => {
    expect(parseSysctls('net.ipv4.ip_forward = 1\nnet.bridge.bridge-nf-call-iptables 0\n')).toEqual(new Map([['net.ipv4.ip_forward', '1'], ['net.bridge.bridge-nf-call-iptables', '0']]));
    expect(sysctls.ask(WORKER_SYSCTLS).cmd.text).toBe(`sysctl ${WORKER_SYSCTLS.join(' ')} 2>/dev/null; :`);
  });
});
