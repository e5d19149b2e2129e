// Before a command's steps run one after another, every change step plans on every host at once,
// each host's fact requests merged into as few round trips as the plans' own order allows. When
// every plan is empty (a rerun on a converged cluster) the run is a no-op and the steps reuse
// those empty plans: a few round trips per machine instead of one or two per step. Otherwise (or
// when a plan needs a wait, or fails) nothing is reused and the steps plan one by one as always:
// a step's plan may depend on what the steps before it change.
import type { Inventory, Machine } from '../inventory.ts';
import { Semaphore } from '../transport/semaphore.ts';
import { coalescedFacts } from './coalesced-facts.ts';
import { openHost, type EngineDeps } from './host-run.ts';
import { targetsOf, type ChangeWork } from './targets.ts';
import type { Host, Step, StepOptions } from './types.ts';

/** What the at-once plan found: every plan empty (reuse them), or why the steps must plan one by one. */
export type AtOnce = { settled: true } | { settled: false; why: string };

/** Plans every change step on every host at once; settled only if every plan is empty. */
export async function planAtOnce(steps: Step[], inventory: Inventory, selected: Machine[], options: StepOptions, deps: EngineDeps): Promise<AtOnce> {
  const hosts = new Map<string, { host: Host; works: ChangeWork[] }>();
  let changeSteps = 0;
  for (const step of steps) {
    const targets = targetsOf(step, inventory, selected, options).filter((t) => t.work.kind === 'change');
    if (targets.length > 0) changeSteps++;
    for (const t of targets) {
      const entry = hosts.get(t.host.name) ?? { host: t.host, works: [] };
      entry.works.push(t.work as ChangeWork);
      hosts.set(t.host.name, entry);
    }
  }
  if (changeSteps < 2) return { settled: false, why: 'one step: nothing to plan ahead' };
  const slots = new Semaphore(options.concurrency);
  let why: string | undefined;
  const started = Date.now();
  await Promise.all([...hosts.values()].map(({ host, works }) => slots.run(async () => {
    if (why !== undefined) return; // another host has work already: the steps plan one by one
    try {
      const log = deps.logger.host(host.name);
      // A machine that cannot be reached is reported by the first step, at once: not after a second
      // round of connection retries.
      const facts = coalescedFacts((await openHost(host, options, deps, { keepFailure: true })).facts);
      // Every plan settles before the host is done, so no request of this round outlives it.
      const plans = await Promise.allSettled(works.map((w) => w.plan({ host: host.name, inventory, facts, options, log })));
      const failed = plans.find((p) => p.status === 'rejected');
      if (failed) throw failed.reason;
      const n = plans.reduce((sum, p) => sum + (p.status === 'fulfilled' ? p.value.length : 0), 0);
      if (n > 0) why ??= `${host.name} has ${n} change(s) to make`;
    } catch (e) {
      why ??= `${host.name}: ${(e as Error)?.message ?? String(e)}`;
    }
  })));
  deps.runLog.write(why === undefined
    ? `every step planned at once on ${hosts.size} host(s) in ${Date.now() - started} ms: nothing to change; the steps reuse these empty plans`
    : `planning every step at once stopped (${why}) after ${Date.now() - started} ms: the steps plan one by one`);
  return why === undefined ? { settled: true } : { settled: false, why };
}
