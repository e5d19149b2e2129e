// Steps on disjoint machines run side by side (the control-plane and worker steps of `up`), while
// their output stays in step order and a step on shared machines waits for everything before it.
import { describe, expect, it } from 'vitest';
import type { Step } from '../../src/engine/types.ts';
import { stepLanes } from '../../src/engine/run.ts';
import { fakeCluster, inventoryOf, runEngine, stepOptions } from './engine.helpers.ts';

const on = (name: string, who: 'all' | 'cp' | 'workers', plan: Step['plan'] = async () => []): Step => ({
  name,
  title: name,
  targets: (inv) => (who === 'all' ? inv.machines : who === 'cp' ? inv.controlPlanes : inv.workers),
  plan,
});

describe('step lanes', () => {
  it('groups control-plane and worker steps into concurrent lanes between steps on every machine', () => {
    const inv = inventoryOf();
    const steps = [on('a', 'all'), on('etcd', 'cp'), on('os', 'workers'), on('cp', 'cp'), on('cni', 'workers'), on('routes', 'all')];
    expect(stepLanes({ steps, inventory: inv, selected: inv.machines, options: stepOptions() })).toEqual([[[0]], [[1, 3], [2, 4]], [[5]]]);
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
    const { result, output } = await runEngine([waits, frees, on('after', 'all')], inv, fakeCluster(inv));
    expect(result.results.map((r) => `${r.step}/${r.machine}/${r.status}`)).toEqual([
      'waits/node-0/unchanged', 'waits/node-1/unchanged', 'frees/server/unchanged',
      'after/server/unchanged', 'after/node-0/unchanged', 'after/node-1/unchanged',
    ]);
    // Shown in step order although `frees` finished first.
    expect(output.indexOf('==> waits')).toBeLessThan(output.indexOf('==> frees'));
    expect(output.indexOf('==> frees')).toBeLessThan(output.indexOf('==> after'));
  }, 10_000);
});
