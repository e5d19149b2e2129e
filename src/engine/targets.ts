// A step bound to each host it runs on. Machines and the jumpbox become the same thing here, a
// Target with its work, so the engine never asks which kind of host it has (only the transport
// factory does, to pick SSH or the local transport).
import type { Inventory, Machine } from '../inventory.ts';
import type { ActionContext, Change, Host, HostContext, Step, StepOptions, VerifyContext } from './types.ts';

/** Work that plans changes: the engine applies them, plans again, then verifies. */
export interface ChangeWork {
  kind: 'change';
  plan(ctx: HostContext): Promise<Change[]>;
  verify(ctx: VerifyContext<HostContext>): Promise<void>;
  unconverged(applied: Change[], again: Change[]): Error | undefined;
}

/** Work that only reads (checks). */
export interface CheckWork {
  kind: 'check';
  check(ctx: HostContext): Promise<void>;
}

/** Work that writes through the transport itself (actions). */
export interface ActionWork {
  kind: 'action';
  run(ctx: HostContext & Pick<ActionContext, 'transport'>): Promise<void>;
}

/** One step on one host. */
export interface Target {
  host: Host;
  work: ChangeWork | CheckWork | ActionWork;
}

/** The targets of a step: its machines among those selected (with --node), then the jumpbox if its part asks. */
export function targetsOf(step: Step, inventory: Inventory, selected: readonly Machine[], options: StepOptions): Target[] {
  const names = new Set(selected.map((m) => m.hostname));
  const machines = step.targets(inventory, options).filter((m) => names.has(m.hostname));
  const targets: Target[] = machines.map((machine) => ({ host: { name: machine.hostname, machine }, work: machineWork(step, machine) }));
  if (step.kind !== 'check' && step.kind !== 'action' && step.jumpbox?.when(options, inventory)) {
    const part = step.jumpbox;
    targets.push({
      host: { name: 'jumpbox' },
      work: { kind: 'change', plan: (ctx) => part.plan(ctx), verify: async (ctx) => part.verify?.(ctx), unconverged: () => undefined },
    });
  }
  return targets;
}

/** The work of a step on one machine: the machine joins the context the step sees. */
function machineWork(step: Step, machine: Machine): Target['work'] {
  if (step.kind === 'check') return { kind: 'check', check: (ctx) => step.check({ ...ctx, machine }) };
  if (step.kind === 'action') return { kind: 'action', run: (ctx) => step.run({ ...ctx, machine }) };
  return {
    kind: 'change',
    plan: (ctx) => step.plan({ ...ctx, machine }),
    verify: async (ctx) => step.verify?.({ ...ctx, machine }),
    unconverged: (applied, again) => step.unconverged?.(applied, again, machine.hostname),
  };
}
