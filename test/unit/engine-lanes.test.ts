// Lanes of steps on disjoint machines run side by side (the control-plane and worker steps of `up`,
// as the command table declares them), while their output stays in step order and the next
// segment waits for everything before it.
import { describe, expect, it } from 'vitest';
import type { ChangeStep } from '../../src/engine/types.ts';
import { remoteEntry } from '../../src/commands/index.ts';
import { stepOrder, stepNames } from '../../src/cli/entry.ts';
import { fakeCluster, inventoryOf, runEngine, stepOptions } from './engine.helpers.ts';

const on = (name: string, who: 'all' | 'cp' | 'workers', plan: ChangeStep['plan'] = async () => []): ChangeStep => ({
  name,
  title: name,
  targets: (inv) => (who === 'all' ? inv.machines : who === 'cp' ? inv.controlPlanes : inv.workers),
  plan,
});

describe('step lanes', () => {
  it('up declares two lanes between steps on every machine: control plane and workers', () => {
    const up = remoteEntry('up').steps;
    const { names, lanes } = stepOrder(up, new Set(stepNames(up)));
    expect(lanes.map((segment) => segment.map((lane) => lane.map((i) => names[i])))).toEqual([
      [['preflight']],
      [['pin-hosts']],
      [['distribute']],
      [['bootstrap-etcd', 'bootstrap-control-plane', 'kubelet-rbac', 'etcd-snapshots'], ['worker-os', 'containerd', 'images', 'cni', 'api-proxy', 'kubelet', 'kube-proxy', 'pod-forwarding']],
      [['routes']],
      [['dns']],
      [['verify']],
    ]);
    // --only keeps the order and drops what is left empty.
    const only = stepOrder(up, new Set(['kubelet', 'bootstrap-etcd', 'routes'] as const));
    expect(only).toEqual({ names: ['bootstrap-etcd', 'kubelet', 'routes'], lanes: [[[0], [1]], [[2]]] });
  });

  it('lanes of control-plane steps and worker steps target disjoint machines', async () => {
    const inv = inventoryOf();
    const { STEPS } = await import('../../src/steps/index.ts');
    const up = remoteEntry('up').steps;
    const [cp, workers] = up.flatMap((s) => (typeof s === 'string' ? [] : s.lanes));
    const hosts = async (lane: readonly (keyof typeof STEPS)[]) => new Set((await Promise.all(lane.map((s) => STEPS[s].load()))).flatMap((s) => s.targets(inv, stepOptions()).map((m) => m.hostname)));
    const [a, b] = [await hosts(cp!), await hosts(workers!)];
    expect([...a].filter((h) => b.has(h))).toEqual([]);
  });

  it('runs the lanes at the same time: a worker step can wait for a control-plane step that comes after it', async () => {
    const inv = inventoryOf();
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    // Run one after another, `waits` (step 1) would never see `frees` (step 2) and the test would time out.
    const waits = on('waits', 'workers', async () => {
      await released;
      return [];
    });
    const frees = on('frees', 'cp', async () => {
      release();
      return [];
    });
    const { result, output } = await runEngine([waits, frees, on('after', 'all')], inv, fakeCluster(inv), { lanes: [[[0], [1]], [[2]]] });
    expect(result.results.map((r) => `${r.step}/${r.machine}/${r.status}`)).toEqual([
      'waits/node-0/unchanged', 'waits/node-1/unchanged', 'frees/server/unchanged',
      'after/server/unchanged', 'after/node-0/unchanged', 'after/node-1/unchanged',
    ]);
    // Shown in step order although `frees` finished first.
    expect(output.indexOf('==> waits')).toBeLessThan(output.indexOf('==> frees'));
    expect(output.indexOf('==> frees')).toBeLessThan(output.indexOf('==> after'));
  }, 10_000);
});
