// The shape of an entry of the command table (src/commands/index.ts), and how a remote command's
// step sequence becomes the engine's order: steps in sequence, lanes side by side.
import type { CliCommand } from '../cli/command.ts';
import type { Inventory } from '../inventory.ts';
import type { StepName } from '../steps/index.ts';

/** A command that runs on this machine only (its own module). */
export interface LocalCommandEntry {
  name: string;
  summary: string;
  load: () => Promise<CliCommand>;
}

/** Lanes of steps run side by side (each lane in its order), on disjoint machines. */
export interface Lanes {
  lanes: ReadonlyArray<readonly StepName[]>;
}

/** A remote command's steps in order; an entry with lanes runs them side by side. */
export type StepSequence = ReadonlyArray<StepName | Lanes>;

/** A command that works on the machines: its steps, run by the engine. */
export interface RemoteCommandEntry {
  name: string;
  summary: string;
  steps: StepSequence;
  /** Makes pki/ (certs, kubeconfigs, encryption config) on the jumpbox first; not with --dry-run. */
  preparesPki?: boolean;
  /** What the command destroys: it then runs only with --yes (or shows its plan with --dry-run). */
  confirm?: string;
  /** The positional arguments a scope takes, for the usage line (e.g. NAME). */
  args?: string;
  /** More to say in --help than the steps and the exit codes. */
  details?: string;
  /** The machines the run is about, from its positional arguments (instead of --node): loaded when the command runs. */
  scope?: () => Promise<RunScope>;
}

/**
 * What a scoped run works on, from its positionals: the inventory as the steps see it (with the
 * machines that leave the cluster in `leaving`), and a line saying what was chosen.
 */
export type RunScope = (inv: Inventory, positionals: string[]) => { inventory: Inventory; note: string };

/** A command's name, its one-line summary for the top-level help, and what it runs. */
export type CommandEntry = LocalCommandEntry | RemoteCommandEntry;

/** True for a command that works on the machines. */
export function isRemote(entry: CommandEntry): entry is RemoteCommandEntry {
  return 'steps' in entry;
}

/** Every step of a sequence, in the order the table names them. */
export function stepNames(steps: StepSequence): StepName[] {
  return steps.flatMap((s) => (typeof s === 'string' ? [s] : s.lanes.flat()));
}

/**
 * The chosen steps of a sequence (in table order) and the engine's order over them: segments run
 * one after another, the lanes of a segment side by side, each a list of indexes into `names`.
 */
export function stepOrder(steps: StepSequence, chosen: ReadonlySet<StepName>): { names: StepName[]; lanes: number[][][] } {
  const names: StepName[] = [];
  const lanes: number[][][] = [];
  const lane = (group: readonly StepName[]) => group.filter((n) => chosen.has(n)).map((n) => names.push(n) - 1);
  for (const s of steps) {
    const segment = (typeof s === 'string' ? [[s]] : s.lanes).map(lane).filter((l) => l.length > 0);
    if (segment.length > 0) lanes.push(segment);
  }
  return { names, lanes };
}
