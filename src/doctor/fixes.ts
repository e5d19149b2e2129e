// The fixes doctor suggests, as data: the steps to run and where, a whole command of the table, a
// project command on the jumpbox, a lab command, or the CA's rotation. Derived from the command
// tables, never typed by hand; turned into the command line a user types (in the project
// directory, with --machines when doctor was given one) only when printed (fixText), and asked
// which steps they run where (fixRuns) as data, never by reading a line back.
import { commandChoice, commandFor, commandLine, remoteEntry, stepNames } from '../command-table.ts';
import { caRotationCommand } from '../certs/check.ts';
import type { StepName } from '../steps/index.ts';
import { SERVICE_STEPS } from '../command-table.ts';
import type { DoctorContext } from './types.ts';

/** The lab's commands a fix or a hint may name (each one of src/commands/lab.ts: a unit test holds them to it). */
export const LAB_VERBS = ['up', 'start', 'stop', 'reboot'] as const;

/** A lab command. */
export type LabVerb = (typeof LAB_VERBS)[number];

/** The project commands (run on the jumpbox, no machine) a fix may name (each one of the command table: a unit test holds them to it). */
export const PROJECT_COMMANDS = ['certs', 'build-images'] as const;

/** One command of a fix. */
export type FixPart =
  /** The command of the table that runs these steps (with --only unless it runs exactly them), on `node` or everywhere. */
  | { steps: readonly StepName[]; node?: string }
  /** A whole remote command of the table (e.g. up, which also makes pki/), on `node` or everywhere. */
  | { command: string; node?: string }
  /** A project command on the jumpbox, with its arguments (`certs --renew NAME`, `build-images`). */
  | { project: (typeof PROJECT_COMMANDS)[number]; args?: readonly string[] }
  /** A lab command on one of its machines. */
  | { lab: Exclude<LabVerb, 'up'>; machine: string; name: string }
  /** The CA's rotation, stage by stage (certs/check.ts says how). */
  | { caRotation: true };

/** A fix: its commands, run one after the other (printed joined by &&). */
export type Fix = readonly FixPart[];

/** `hardway lab VERB --name LAB [FLAGS]`: a lab command as a user types it. */
export function labLine(verb: LabVerb, lab: string, ...flags: string[]): string {
  return ['hardway', 'lab', verb, '--name', lab, ...flags].join(' ');
}

/** `hardway lab VERB MACHINE --name LAB`: a lab command on one of its machines, as a user types it. */
export function labMachineLine(verb: Exclude<LabVerb, 'up'>, machine: string, lab: string): string {
  return ['hardway', 'lab', verb, machine, '--name', lab].join(' ');
}

/** The fix that runs `steps` on `machine` (or on every machine they target, without one). */
export function stepsFix(steps: readonly StepName[], machine?: string): Fix {
  return [{ steps, ...(machine ? { node: machine } : {}) }];
}

/** A whole command of the table on `machine` (e.g. `up`, which also makes pki/). */
export function commandFix(command: string, machine?: string): Fix {
  remoteEntry(command);
  return [{ command, ...(machine ? { node: machine } : {}) }];
}

/** The step that installs a service, on its machine. */
export function serviceFix(service: string, machine: string): Fix {
  return stepsFix([SERVICE_STEPS.get(service) ?? 'bootstrap-control-plane'], machine);
}

/** A lab command on one of its machines. */
export function labFix(verb: Exclude<LabVerb, 'up'>, machine: string, lab: string): Fix {
  return [{ lab: verb, machine, name: lab }];
}

/** What brings back a machine that does not answer: in a lab, start it (or reboot it if it runs); elsewhere nothing hardway can do. */
export function unreachableFix(ctx: DoctorContext, machine: string): Fix | null {
  if (!ctx.lab) return null;
  return labFix(ctx.lab.running.includes(machine) ? 'reboot' : 'start', machine, ctx.lab.name);
}

/** A project command on the jumpbox. */
export function projectFix(command: (typeof PROJECT_COMMANDS)[number], ...args: string[]): Fix {
  return [{ project: command, ...(args.length ? { args } : {}) }];
}

/** One part as a user types it; `projectArgs` (e.g. ` --machines FILE`) go on every hardway command of the project, not on the lab's. */
function partText(p: FixPart, projectArgs: string): string {
  if ('steps' in p) return commandFor(p.steps, { ...(p.node ? { node: p.node } : {}), extra: projectArgs });
  if ('command' in p) return commandLine(p.command, { ...(p.node ? { node: p.node } : {}), extra: projectArgs });
  if ('project' in p) return ['hardway', p.project, ...(p.args ?? [])].join(' ') + projectArgs;
  if ('lab' in p) return labMachineLine(p.lab, p.machine, p.name);
  return caRotationCommand(projectArgs);
}

/** The command line of a fix, as printed and in --json (null: no hardway command fixes it). */
export function fixText(fix: Fix | null, projectArgs: string): string | null {
  return fix === null ? null : fix.map((p) => partText(p, projectArgs)).join(' && ');
}

/** The command line of a fix's first part (the drift's dry run names it). */
export function firstCommandText(fix: Fix, projectArgs: string): string {
  return partText(fix[0]!, projectArgs);
}

/** Whether `fix` runs `step` on `machine`: a part that runs steps, on that machine or on every one. */
export function fixRuns(fix: Fix | null, step: StepName, machine: string): boolean {
  return (fix ?? []).some((p) => {
    const runs = 'steps' in p ? commandChoice(p.steps).runs : 'command' in p ? stepNames(remoteEntry(p.command).steps) : [];
    const node = 'steps' in p || 'command' in p ? p.node : undefined;
    return runs.includes(step) && (node === undefined || node === machine);
  });
}

/** Whether two fixes are the same commands (as a user would type them). */
export function sameFix(a: Fix | null, b: Fix | null): boolean {
  return a !== null && b !== null && fixText(a, '') === fixText(b, '');
}

/** Whether a fix builds the offline images first (a project command no node runs by itself). */
export function buildsImages(fix: Fix | null): boolean {
  return (fix ?? []).some((p) => 'project' in p && p.project === 'build-images');
}
