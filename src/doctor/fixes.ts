// The command lines doctor suggests: each one a real hardway command that undoes that cause, as a
// user types it in the project directory (with --machines when doctor was given one), derived from
// the command table (the steps that put it back), never typed by hand.
import { commandFor, commandLine, REMOTE_COMMANDS, stepNames } from '../command-table.ts';
import type { StepName } from '../steps/index.ts';
import { SERVICE_STEPS } from '../steps/step-names.ts';
import type { DoctorContext } from './types.ts';

/** The command that runs `steps` on `machine` (or on every machine they target, without one). */
export function stepsFix(ctx: DoctorContext, steps: readonly StepName[], machine?: string): string {
  return commandFor(steps, { ...(machine ? { node: machine } : {}), extra: ctx.projectArgs });
}

/** A whole command of the table on `machine` (e.g. `up`, which also makes pki/). */
export function commandFix(ctx: DoctorContext, command: string, machine?: string): string {
  return commandLine(command, { ...(machine ? { node: machine } : {}), extra: ctx.projectArgs });
}

/** The lab's commands a fix or a hint may name (each one of src/commands/lab.ts: a unit test holds them to it). */
export const LAB_VERBS = ['up', 'start', 'stop', 'reboot'] as const;

/** A lab command. */
export type LabVerb = (typeof LAB_VERBS)[number];

/** `hardway lab VERB --name LAB [FLAGS]`: a lab command as a user types it. */
export function labLine(verb: LabVerb, lab: string, ...flags: string[]): string {
  return ['hardway', 'lab', verb, '--name', lab, ...flags].join(' ');
}

/** `hardway lab VERB MACHINE --name LAB`: a lab command on one of its machines, as a user types it. */
export function labMachineLine(verb: Exclude<LabVerb, 'up'>, machine: string, lab: string): string {
  return ['hardway', 'lab', verb, machine, '--name', lab].join(' ');
}

/** What brings back a machine that does not answer: in a lab, start it (or reboot it if it runs); elsewhere nothing hardway can do. */
export function unreachableFix(ctx: DoctorContext, machine: string): string | null {
  if (!ctx.lab) return null;
  const verb = ctx.lab.running.includes(machine) ? 'reboot' : 'start';
  return labMachineLine(verb, machine, ctx.lab.name);
}


/** The step that installs a service, on its machine. */
export function serviceFix(ctx: DoctorContext, service: string, machine: string): string {
  return stepsFix(ctx, [SERVICE_STEPS.get(service) ?? 'bootstrap-control-plane'], machine);
}

/** Whether the command line `fix` (as stepsFix and commandFix make them, parts joined by &&) runs `step` on `machine`. */
export function fixRuns(fix: string | null, step: StepName, machine: string): boolean {
  return (fix ?? '').split('&&').some((part) => {
    const words = part.trim().split(/\s+/);
    const entry = words[0] === 'hardway' ? REMOTE_COMMANDS.find((c) => c.name === words[1]) : undefined;
    if (!entry) return false;
    const after = (flag: string) => words.flatMap((w, i) => (w === flag && words[i + 1] ? [words[i + 1]!] : []));
    const only = after('--only');
    const nodes = after('--node');
    return (only.length ? only : stepNames(entry.steps)).includes(step) && (nodes.length === 0 || nodes.includes(machine));
  });
}
