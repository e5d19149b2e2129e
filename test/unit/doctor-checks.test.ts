// Doctor's registry of checks: each check one object with a name and a rank of its own and a line
// saying what it looks at, the report's order derived from the ranks, what each machine is asked
// derived from what the checks ask (a key two checks share asks one probe), and every explains rule
// naming a registered check.
import { describe, expect, it } from 'vitest';
import { requestsOf } from '../../src/doctor/batch.ts';
import { CHECK_LIST, CHECKS } from '../../src/doctor/checks/index.ts';
import { recorded } from './doctor.helpers.ts';

describe('doctor checks are registered objects', () => {
  it('each has a name and a rank of its own; the order is by rank, and keeps the order the findings were ranked in before the registry', () => {
    expect(new Set(CHECKS).size).toBe(CHECKS.length);
    expect(new Set(CHECK_LIST.map((c) => c.rank)).size).toBe(CHECK_LIST.length);
    expect(CHECK_LIST.map((c) => c.rank)).toEqual([...CHECK_LIST.map((c) => c.rank)].sort((a, b) => a - b));
    const before = ['ssh', 'control-plane', 'api', 'names', 'kubelet', 'containerd', 'cni', 'certificates', 'drift', 'kube-proxy', 'netfilter',
      'ip-forward', 'routes', 'pod-subnet', 'kubelet-dns', 'dns', 'registry', 'pull', 'node', 'pods'];
    expect(CHECKS.filter((c) => before.includes(c))).toEqual(before);
  });

  it('each says, in one line of its own, what it looks at (the list "hardway doctor --help" prints)', () => {
    for (const c of CHECK_LIST) expect(c.looks, c.name).toMatch(/^\S[^\n]*\S$/);
    expect(new Set(CHECK_LIST.map((c) => c.looks)).size).toBe(CHECK_LIST.length);
  });

  it('each explains only registered checks, and judges something', () => {
    for (const c of CHECK_LIST) {
      for (const other of Object.keys(c.explains ?? {})) expect(CHECKS, `${c.name} explains ${other}`).toContain(other);
      expect(c.judge ?? c.api ?? c.plans ?? c.unreachable ?? c.apiDown, c.name).toBeDefined();
    }
  });

  it("a machine's batch is the union of what the checks ask, each key asked once; a key asked differently by two checks is refused", () => {
    const { ctx } = recorded('healthy');
    for (const machine of ctx.inventory.machines) {
      const q = { inventory: ctx.inventory, machine, rendered: Object.keys(ctx.rendered[machine.hostname] ?? {}), testImages: ['x/y:1'], dnsPods: [] };
      const asked = CHECK_LIST.flatMap((c) => (c.later ? [] : Object.keys(c.asks?.(q) ?? {})));
      expect(Object.keys(requestsOf(q, false).probes).sort()).toEqual([...new Set(asked)].sort());
    }
    const worker = ctx.inventory.workers[0]!;
    const q = { inventory: ctx.inventory, machine: worker, rendered: [], testImages: ['x/y:1'], dnsPods: [] };
    expect(Object.keys(requestsOf(q, true).probes)).toEqual(['pull x/y:1', 'cached images']);
  });
});
