// Before a command's steps run one after another, every change step plans on every host at once,
// each host's fact requests merged into as few round trips as the plans' own order allows. The
// steps' verify and the checks (verify, which only read) go in the same round: if every plan is
// empty (a rerun on a converged cluster) nothing changes before they would run, so what they read
// now is what they would read then, and the run reuses their outcomes too. A machine then answers
// one round trip for the whole command. Otherwise (or when a plan needs a wait, or fails) nothing
// is reused and the steps plan one by one as always: a step's plan may depend on what the steps
// before it change. A verify or check that needs a command of its own (a wait) runs again later.
import type { Inventory } from '../inventory.ts';
import { Semaphore } from '../transport/semaphore.ts';
import { coalescedFacts } from './coalesced-facts.ts';
import type { Facts } from './facts.ts';
import type { EngineDeps, RunHosts } from './hosts.ts';
import type { ChangeWork, CheckWork, Target } from './targets.ts';
import type { Host, HostContext, Step, StepOptions } from './types.ts';

/** How a verify or check ended in the at-once round: passed, or the error it threw. */
export type EarlyOutcome = { ok: true } | { ok: false; error: unknown };

/**
 * What the at-once plan found: every plan empty (reuse them, and the outcomes of the verifies and
 * checks that could run in the same round), or why the steps must plan one by one.
 */
export type AtOnce = { settled: true; outcome(step: string, host: string): EarlyOutcome | undefined } | { settled: false; why: string };

type Work = { step: Step; work: ChangeWork | CheckWork };

/** Plans every change step on every host at once, verifies and checks alongside; settled only if every plan is empty. `targets[i]` are steps[i]'s. */
export async function planAtOnce(steps: Step[], targetsOfStep: Target[][], inventory: Inventory, options: StepOptions, deps: EngineDeps, open: RunHosts): Promise<AtOnce> {
  const hosts = new Map<string, { host: Host; works: Work[] }>();
  let changeSteps = 0;
  for (const [i, step] of steps.entries()) {
    const targets = targetsOfStep[i]!;
    if (targets.some((t) => t.work.kind === 'change')) changeSteps++;
    for (const t of targets) {
      // Actions write; checks do not run under --dry-run (nor does any verify).
      if (t.work.kind === 'action' || (t.work.kind === 'check' && options.dryRun)) continue;
      const entry = hosts.get(t.host.name) ?? { host: t.host, works: [] };
      entry.works.push({ step, work: t.work });
      hosts.set(t.host.name, entry);
    }
  }
  if (changeSteps < 2) return { settled: false, why: 'one step: nothing to plan ahead' };
  const slots = new Semaphore(options.concurrency);
  const outcomes = new Map<string, EarlyOutcome>();
  let why: string | undefined;
  const started = Date.now();
  await Promise.all([...hosts.values()].map(({ host, works }) => slots.run(async () => {
    if (why !== undefined) return; // another host has work already: the steps plan one by one
    try {
      const log = deps.logger.host(host.name);
      // A machine that cannot be reached is reported by the first step, at once: not after a second
      // round of connection retries.
      const facts = coalescedFacts((await open(host, { keepFailure: true })).facts);
      const ctx: HostContext = { host: host.name, inventory, facts, options, log };
      const plans = works.flatMap(({ work }) => (work.kind === 'change' ? [work.plan(ctx)] : []));
      // Every plan and read settles before the host is done, so no request of this round outlives it.
      const reads = works.flatMap(({ step, work }) => {
        if (work.kind === 'change' && options.dryRun) return [];
        const asked = watched(facts);
        const run = work.kind === 'check' ? work.check({ ...ctx, facts: asked.facts }) : work.verify({ ...ctx, facts: asked.facts, applied: [] });
        return [run.then(() => ({ ok: true }) as EarlyOutcome, (error: unknown) => ({ ok: false, error }) as EarlyOutcome).then((o) => {
          // One that needed a wait (or caught the refusal) runs again in its step, as it would have.
          if (!asked.refused) outcomes.set(keyOf(step.name, host.name), o);
        })];
      });
      const [planned] = await Promise.all([Promise.allSettled(plans), Promise.all(reads)]);
      const failed = planned.find((p) => p.status === 'rejected');
      if (failed) throw failed.reason;
      const n = planned.reduce((sum, p) => sum + (p.status === 'fulfilled' ? p.value.length : 0), 0);
      if (n > 0) why ??= `${host.name} has ${n} change(s) to make`;
    } catch (e) {
      why ??= `${host.name}: ${(e as Error)?.message ?? String(e)}`;
    }
  })));
  deps.runLog.write(why === undefined
    ? `every step planned at once on ${hosts.size} host(s) in ${Date.now() - started} ms: nothing to change; the steps reuse these empty plans ` +
      `and ${outcomes.size} verify and check outcome(s) read in the same round`
    : `planning every step at once stopped (${why}) after ${Date.now() - started} ms: the steps plan one by one`);
  return why === undefined ? { settled: true, outcome: (step, host) => outcomes.get(keyOf(step, host)) } : { settled: false, why };
}

const keyOf = (step: string, host: string) => `${step}\n${host}`;

/** The facts with a record of whether a wait was asked for (and refused). */
function watched(facts: Facts): { facts: Facts; refused: boolean } {
  const w = {
    refused: false,
    facts: {
      ...facts,
      wait: (async (req) => {
        w.refused = true;
        return facts.wait(req);
      }) as Facts['wait'],
    },
  };
  return w;
}
