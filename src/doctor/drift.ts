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
 * The steps whose plan reads and applies the cluster's API objects (CoreDNS's objects, the kubelet
 * RBAC): doctor compares those objects with what the step would apply, as it compares machines'
 * files, asking the API straight from the jumpbox (`apiFacts`) where it can: a kubectl on a loaded
 * control plane costs a second.
 */
export const API_STEPS: ReadonlySet<StepName> = new Set(['kubelet-rbac', 'dns']);

/** A change step of `up`, loaded. */
export interface UpChangeStep {
  name: StepName;
  step: ChangeStep;
}

/** The change steps of `up`, in its order, loaded once per run. */
export async function upChangeSteps(): Promise<UpChangeStep[]> {
  const names = stepNames(remoteEntry('up').steps);
  const loaded = await Promise.all(names.map(async (name) => ({ name, step: (await STEPS[name].load()) as Step })));
  return loaded.filter((s): s is UpChangeStep => s.step.kind === undefined || s.step.kind === 'change');
}

/**
 * Plans every step that targets `m` over `facts` (reads only); each step with changes, in `up`'s
 * order. The API steps plan over `apiFacts(facts)` when given (the API asked from the jumpbox, the
 * machine where it does not answer). Never throws.
 */
export async function planDrift(inv: Inventory, m: Machine, facts: Facts, steps: UpChangeStep[], apiFacts?: (facts: Facts) => Facts): Promise<DriftEvidence[]> {
  const mine = steps.filter(({ step }) => step.targets(inv, PLAN_OPTIONS).some((t) => t.hostname === m.hostname));
  const log = { info: () => undefined, debug: () => undefined };
  const viaApi = apiFacts && mine.some(({ name }) => API_STEPS.has(name)) ? apiFacts(facts) : facts;
  const planned = await Promise.all(mine.map(async ({ name, step }) => {
    try {
      const changes = await step.plan({ host: m.hostname, machine: m, inventory: inv, facts: API_STEPS.has(name) ? viaApi : facts, options: PLAN_OPTIONS, log });
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
