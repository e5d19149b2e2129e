// The shape of an entry of the command table (src/commands/index.ts), and how a remote command's
// step sequence becomes the engine's order: steps in sequence, lanes side by side.
import type { CommandModule, Example } from '../cli/command.ts';
import type { StepName } from '../steps/index.ts';

/** A heading of the top-level help: the commands of one kind. */
export interface CommandGroup {
  key: 'machines' | 'project' | 'cluster' | 'day-two';
  title: string;
}

/** A command that runs on this machine only (its own module, which holds its options and examples). */
export interface LocalCommandEntry {
  name: string;
  summary: string;
  group: CommandGroup['key'];
  load: () => Promise<CommandModule>;
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
  group: CommandGroup['key'];
  steps: StepSequence;
  /** At least one, for --help. */
  examples: readonly Example[];
  /** Makes pki/ (certs, kubeconfigs, encryption config) on the jumpbox first; with --dry-run, shows what it would make. */
  preparesPki?: boolean;
  /** What the command destroys: it then runs only with --yes (or shows its plan with --dry-run). */
  confirm?: string;
}

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
