// The shape of an entry of the command table (src/commands/index.ts): a command of its own module,
// or one that works on the machines (src/command-table.ts).
import type { CommandModule } from './command.ts';
import type { CommandGroupKey } from '../option-spec.ts';
import type { RemoteCommandEntry } from '../command-table.ts';

export { stepNames, stepOrder, type Lanes, type RemoteCommandEntry, type RunScope, type StepSequence } from '../command-table.ts';

/** A heading of the top-level help: the commands of one kind. */
export interface CommandGroup {
  key: CommandGroupKey;
  title: string;
}

/** A command that runs on this machine only (its own module, which holds its options and examples). */
export interface LocalCommandEntry {
  name: string;
  summary: string;
  group: CommandGroupKey;
  load: () => Promise<CommandModule>;
}

/** A command's name, its one-line summary for the top-level help, and what it runs. */
export type CommandEntry = LocalCommandEntry | RemoteCommandEntry;

/** True for a command that works on the machines. */
export function isRemote(entry: CommandEntry): entry is RemoteCommandEntry {
  return 'steps' in entry;
}
