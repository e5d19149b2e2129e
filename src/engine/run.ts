// The plan/apply loop over a command's steps: steps in order (the lanes the command table declares
// side by side); within a step, hosts in parallel up to the concurrency cap. A failed host never stops the others; it stops later steps (all of
// them, or with --keep-going only for the hosts that failed).
import type { Inventory, Machine } from '../inventory.ts';
import type { Reporter } from '../ui/reporter.ts';
import type { HostResult, RunResult, Step, StepOptions } from './types.ts';
import { InOrderReporter } from './in-order.ts';
import { Semaphore } from '../transport/semaphore.ts';
import { runStepOnHost } from './host-run.ts';
import { runHosts, type EngineDeps } from './hosts.ts';
import { targetsOf, type Target } from './targets.ts';
import { summarize } from '../ui/summary.ts';
import { planAtOnce } from './plan-at-once.ts';
import type { InFlight } from './in-flight.ts';

/** What to run: the steps in order, the inventory, the machines chosen with --node, the options. */
export interface RunRequest {
  steps: Step[];
  /**
   * Segments run one after another; the lanes of a segment (steps on disjoint machines, each lane in
   * its own order) run side by side. Indexes into `steps`; default: one step at a time. The command
   * table (src/commands/index.ts) declares them.
   */
  lanes?: number[][][];
  inventory: Inventory;
  selected: Machine[];
  options: StepOptions;
}

/**
 * Runs every step and returns the results of every step on every host it targets, segment after
 * segment, the lanes of a segment at the same time. --concurrency caps the machines worked on at
 * once overall.
 */
export async function runSteps(req: RunRequest, deps: EngineDeps & { reporter: Reporter; inFlight?: InFlight }): Promise<RunResult> {
  const perStep: HostResult[][] = req.steps.map(() => []);
  const failedHosts = new Map<string, string>();
  const slots = new Semaphore(req.options.concurrency);
  const shown = new InOrderReporter(deps.reporter);
  let stoppedBy: string | undefined;
  // Each step's targets, computed once; each host opened once for the whole run.
  const targetsOfStep = req.steps.map((step) => targetsOf(step, req.inventory, req.selected, req.options));
  const hosts = runHosts(req.options, deps);
  const announced = new Set<number>();
  /** Shows step i's header and its machines (once); the machines that failed earlier are not among them. */
  const announce = (i: number, runnable: Target[]) => {
    if (announced.has(i)) return;
    announced.add(i);
    const step = req.steps[i]!;
    const idle = step.kind === 'check' || step.kind === 'action' ? undefined : step.idle?.(req.inventory);
    shown.forStep(i).stepStarted(idle ? { name: step.name, title: `${step.title}: ${idle}` } : step, runnable.map((t) => t.host.name));
    deps.inFlight?.announce(step.name, runnable.map((t) => t.host.name));
  };
  // The first step and its machines show at once: the at-once round below reaches every machine
  // first, and a machine that does not answer takes seconds of retries, which show under it.
  if (req.steps.length > 0) announce(0, targetsOfStep[0]!);
  // A converged cluster's rerun: every plan, asked at once, is empty, and the steps reuse them.
  const atOnce = await planAtOnce(req.steps, targetsOfStep, req.inventory, req.options, deps, hosts);

  const runStep = async (i: number) => {
    const step = req.steps[i]!;
    const targets = targetsOfStep[i]!;
    if (stoppedBy !== undefined) {
      const why = `not run: step ${stoppedBy} failed (--keep-going runs later steps on the machines that did not fail)`;
      perStep[i] = targets.map((t) => skipped(step, t, why));
      shown.skip(i);
      return;
    }
    const reporter = shown.forStep(i);
    const started = Date.now();
    const runnable = targets.filter((t) => !failedHosts.has(t.host.name));
    // Every machine of the step failed before it (--keep-going): nothing to show, the summary says why.
    if (runnable.length === 0 && targets.length > 0 && !announced.has(i)) {
      perStep[i] = targets.map((t) => skipped(step, t, `not run: failed in step ${failedHosts.get(t.host.name)}`));
      shown.skip(i);
      return;
    }
    announce(i, runnable);
    const untouched = new Set<string>();
    const runOne = (target: Target) => slots.run(async () => {
      // What an interrupt says was running: this step on this machine, until it ends.
      deps.inFlight?.start(step.name, target.host.name);
      const outcome = await runStepOnHost(step, target, req.inventory, req.options, deps, hosts, atOnce).finally(() => deps.inFlight?.end(step.name, target.host.name));
      reporter.hostFinished(step, outcome.result, outcome.details);
      if (outcome.untouched) untouched.add(target.host.name);
      return outcome.result;
    });
    const inTurns = runnable.filter((t) => t.host.machine !== undefined && step.inTurns?.(t.host.machine) === true);
    const together = runnable.filter((t) => !inTurns.includes(t));
    const outcomes = (await Promise.all([Promise.all(together.map(runOne)), oneByOne(inTurns, runOne, (t, failed) => {
      const r = skipped(step, t, `not run: ${failed} failed first, and these machines take turns (a rolling restart stops at the first failure)`);
      reporter.hostFinished(step, r, []);
      return r;
    })])).flat();
    // The log's `==>` lines follow the display order; this line is when the step really ended.
    deps.runLog.write(`step ${step.name} finished in ${Date.now() - started} ms`);
    await reporter.stepFinished(step, outcomes);
    // Keep the summary in inventory order, failed-earlier hosts included as skipped.
    perStep[i] = targets.map((t) => outcomes.find((o) => o.machine === t.host.name) ?? skipped(step, t, `not run: failed in step ${failedHosts.get(t.host.name)}`));
    // A step that could not start (missing binaries, no API yet) left the machine as it was: with
    // --keep-going the later steps, which may not need what was missing, still run there.
    for (const r of outcomes) if (r.status === 'failed' && !untouched.has(r.machine)) failedHosts.set(r.machine, step.name);
    if (outcomes.some((r) => r.status === 'failed') && !req.options.keepGoing) stoppedBy = step.name;
  };

  // Settled, no step changes anything: what is left (the steps' verify and the checks) only
  // reads the machines as they are, so every step goes at once.
  const segments = atOnce.settled ? [req.steps.map((_, i) => [i])] : req.lanes ?? req.steps.map((_, i) => [[i]]);
  for (const lanes of segments) {
    await Promise.all(lanes.map(async (lane) => {
      for (const i of lane) await runStep(i);
    }));
  }
  await shown.drain();
  return summarize(perStep.flat());
}

/** Runs targets one after another; once one fails, the rest become `stop(target, failedHost)` instead. */
async function oneByOne(targets: Target[], run: (t: Target) => Promise<HostResult>, stop: (t: Target, failed: string) => HostResult): Promise<HostResult[]> {
  const results: HostResult[] = [];
  for (const t of targets) {
    const failed = results.find((r) => r.status === 'failed');
    results.push(failed ? stop(t, failed.machine) : await run(t));
  }
  return results;
}

function skipped(step: Step, target: Target, why: string): HostResult {
  return { step: step.name, machine: target.host.name, status: 'skipped', changes: 0, error: why };
}
