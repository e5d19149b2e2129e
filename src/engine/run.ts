// The plan/apply loop over a command's steps: steps in order; within a step, hosts in parallel
// up to the concurrency cap. A failed host never stops the others; it stops later steps (all of
// them, or with --keep-going only for the hosts that failed).
import type { Inventory, Machine } from '../inventory.ts';
import type { Reporter } from '../ui/reporter.ts';
import type { HostResult, RunResult, Step, StepOptions } from './types.ts';
import { mapLimit } from './fanout.ts';
import { runStepOnHost, type EngineDeps, type Host } from './host-run.ts';
import { summarize } from '../ui/summary.ts';

/** What to run: the steps in order, the inventory, the machines chosen with --node, the options. */
export interface RunRequest {
  steps: Step[];
  inventory: Inventory;
  selected: Machine[];
  options: StepOptions;
}

/** Runs every step and returns the results of every step on every host it targets. */
export async function runSteps(req: RunRequest, deps: EngineDeps & { reporter: Reporter }): Promise<RunResult> {
  const results: HostResult[] = [];
  const failedHosts = new Map<string, string>();
  let stoppedBy: string | undefined;
  for (const step of req.steps) {
    const hosts = hostsFor(step, req);
    if (stoppedBy !== undefined) {
      const why = `not run: step ${stoppedBy} failed (--keep-going runs later steps on the machines that did not fail)`;
      results.push(...hosts.map((h) => skipped(step, h, why)));
      continue;
    }
    const runnable = hosts.filter((h) => !failedHosts.has(h.name));
    deps.reporter.stepStarted(step, runnable.map((h) => h.name));
    const untouched = new Set<string>();
    const outcomes = await mapLimit(runnable, req.options.concurrency, async (host) => {
      const outcome = await runStepOnHost(step, host, req.inventory, req.options, deps);
      deps.reporter.hostFinished(step, outcome.result, outcome.details);
      if (outcome.untouched) untouched.add(host.name);
      return outcome.result;
    });
    await deps.reporter.stepFinished(step, outcomes);
    // Keep the summary in inventory order, failed-earlier hosts included as skipped.
    for (const h of hosts) {
      const r = outcomes.find((o) => o.machine === h.name);
      results.push(r ?? skipped(step, h, `not run: failed in step ${failedHosts.get(h.name)}`));
    }
    // A step that could not start (missing binaries, no API yet) left the machine as it was: with
    // --keep-going the later steps, which may not need what was missing, still run there.
    for (const r of outcomes) if (r.status === 'failed' && !untouched.has(r.machine)) failedHosts.set(r.machine, step.name);
    if (outcomes.some((r) => r.status === 'failed') && !req.options.keepGoing) stoppedBy = step.name;
  }
  return summarize(results);
}

/** The hosts a step runs on: its targets among the selected machines, plus the jumpbox if it asks. */
function hostsFor(step: Step, req: RunRequest): Host[] {
  const names = new Set(req.selected.map((m) => m.hostname));
  const hosts: Host[] = step
    .targets(req.inventory, req.options)
    .filter((m) => names.has(m.hostname))
    .map((m) => ({ name: m.hostname, machine: m }));
  if (step.jumpbox?.when(req.options)) hosts.push({ name: 'jumpbox' });
  return hosts;
}

function skipped(step: Step, host: Host, why: string): HostResult {
  return { step: step.name, machine: host.name, status: 'skipped', changes: 0, error: why };
}
