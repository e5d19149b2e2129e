// Drift as evidence: every change step of `up` plans on the machine, read-only, over the facts doctor
// already asks it (the first reads of every plan go out with doctor's own batch, as one round trip),
// and what each plan would change is kept as lines that never show a file's content. A plan that
// cannot be made read-only in one go (it needs a wait, the API is down, downloads/ lacks a binary)
// is left out: doctor's other checks speak for that machine.
import { remoteEntry, stepNames } from '../command-table.ts';
import type { Facts } from '../engine/facts.ts';
import type { Change, ChangeStep, Step, StepOptions } from '../engine/types.ts';
import type { Inventory, Machine } from '../inventory.ts';
import { STEPS, type StepName } from '../steps/index.ts';
import type { DriftEvidence } from './types.ts';

/** The options doctor's plans see: a dry run (a plan then never waits long), every step option at its default. */
const PLAN_OPTIONS: StepOptions = { dryRun: true, verbose: false, keepGoing: false, concurrency: 1, values: {} };

/**
 * The steps whose plan reads the cluster's objects through the API (kubectl on the control plane):
 * doctor reads the API once from the jumpbox instead (CoreDNS's Deployment and pods: the dns check),
 * which keeps a run to its time (a kubectl on a loaded control plane costs a second).
 */
export const API_STEPS: ReadonlySet<StepName> = new Set(['kubelet-rbac', 'dns']);

/** The change steps of `up` that plan from the machine itself, in its order, loaded once per run. */
export async function upChangeSteps(): Promise<{ name: StepName; step: ChangeStep }[]> {
  const names = stepNames(remoteEntry('up').steps).filter((n) => !API_STEPS.has(n));
  const loaded = await Promise.all(names.map(async (name) => ({ name, step: (await STEPS[name].load()) as Step })));
  return loaded.filter((s): s is { name: StepName; step: ChangeStep } => s.step.kind === undefined || s.step.kind === 'change');
}

/** Plans every step that targets `m` over `facts` (reads only); each step with changes, in `up`'s order. Never throws. */
export async function planDrift(inv: Inventory, m: Machine, facts: Facts, steps: { name: StepName; step: ChangeStep }[]): Promise<DriftEvidence[]> {
  const mine = steps.filter(({ step }) => step.targets(inv, PLAN_OPTIONS).some((t) => t.hostname === m.hostname));
  const log = { info: () => undefined, debug: () => undefined };
  const planned = await Promise.all(mine.map(async ({ name, step }) => {
    try {
      const changes = await step.plan({ host: m.hostname, machine: m, inventory: inv, facts, options: PLAN_OPTIONS, log });
      return { step: name, changes: changes.map(driftLine) };
    } catch {
      return { step: name, changes: [] };
    }
  }));
  return planned.filter((d) => d.changes.length > 0);
}

/** One planned change as a line: the path and why for a file (never its content), why and the start of the command otherwise. */
export function driftLine(c: Change): string {
  if (c.kind === 'put') return `${c.path}: ${c.reason}${c.secret ? ' (secret: content not shown)' : ''}`;
  const cmd = c.cmd.text.split('\n')[0]!;
  return `${c.reason} (would run: ${cmd.length > 100 ? `${cmd.slice(0, 100)}...` : cmd})`;
}
