// Machines a step marks `inTurns` (distribute's control planes: a rolling restart) run one at a
// time in inventory order while the step's other machines run beside them, and a failure among
// them stops the rest of the turns.
import { describe, expect, it } from 'vitest';
import { FailureError } from '../../src/errors.ts';
import type { ChangeStep } from '../../src/engine/types.ts';
import { distributeStep } from '../../src/steps/distribute.ts';
import { fakeCluster, inventoryOf, runEngine } from './engine.helpers.ts';

const THREE_SERVERS = `10.240.0.10 server-0.kubernetes.local server-0
10.240.0.11 server-1.kubernetes.local server-1
10.240.0.12 server-2.kubernetes.local server-2
10.240.0.20 node-0.kubernetes.local node-0 10.200.0.0/24
10.240.0.21 node-1.kubernetes.local node-1 10.200.1.0/24
`;

/** A step on every machine whose control planes take turns; `plan` is told the machine. */
function rollingStep(plan: (host: string) => Promise<void>): ChangeStep {
  return {
    name: 'rolling',
    title: 'rolling',
    targets: (inv) => inv.machines,
    inTurns: (m) => m.role === 'control-plane',
    plan: async (ctx) => {
      await plan(ctx.machine.hostname);
      return [];
    },
  };
}

/** Lets every other pending task run (several event-loop turns), so overlapping work would show. */
const yieldMany = async () => {
  for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
};

describe('a step whose control planes take turns', () => {
  it('runs them one at a time in inventory order, the workers beside them', async () => {
    const inv = inventoryOf(THREE_SERVERS);
    const events: string[] = [];
    let inFlight = 0;
    let most = 0;
    let workerStarted!: () => void;
    const workerSeen = new Promise<void>((r) => (workerStarted = r));
    const step = rollingStep(async (host) => {
      events.push(`start ${host}`);
      if (host.startsWith('node-')) return workerStarted();
      most = Math.max(most, ++inFlight);
      // The first control plane waits for a worker: were the workers run after the turns, this would never end.
      if (host === 'server-0') await workerSeen;
      await yieldMany();
      inFlight--;
      events.push(`end ${host}`);
    });
    const { result } = await runEngine([step], inv, fakeCluster(inv));
    expect(result.ok).toBe(true);
    expect(most).toBe(1);
    const servers = events.filter((e) => e.includes('server'));
    expect(servers).toEqual(['start server-0', 'end server-0', 'start server-1', 'end server-1', 'start server-2', 'end server-2']);
    expect(events.indexOf('start node-0')).toBeLessThan(events.indexOf('end server-0'));
    expect(result.results.map((r) => r.machine)).toEqual(['server-0', 'server-1', 'server-2', 'node-0', 'node-1']);
  });

  it('stops the turns at the first failure: later control planes are not run, workers are', async () => {
    const inv = inventoryOf(THREE_SERVERS);
    const ran: string[] = [];
    const step = rollingStep(async (host) => {
      ran.push(host);
      if (host === 'server-1') throw new FailureError('kube-apiserver did not answer /readyz');
    });
    const { result, output } = await runEngine([step], inv, fakeCluster(inv), { keepGoing: true });
    expect(ran.sort()).toEqual(['node-0', 'node-1', 'server-0', 'server-1']);
    expect(result.results.map((r) => `${r.machine}/${r.status}`)).toEqual(['server-0/unchanged', 'server-1/failed', 'server-2/skipped', 'node-0/unchanged', 'node-1/unchanged']);
    expect(result.results[2]!.error).toBe('not run: server-1 failed first, and these machines take turns (a rolling restart stops at the first failure)');
    expect(result.ok).toBe(false);
    expect(output).toContain('server-1');
  });

  it('distribute takes turns on the control planes only', () => {
    const inv = inventoryOf(THREE_SERVERS);
    expect(inv.machines.map((m) => distributeStep.inTurns?.(m) ?? false)).toEqual([true, true, true, false, false]);
  });
});
