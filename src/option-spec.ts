// How a command option and an example are described: the shape node:util parseArgs takes, plus what
// --help says. Below the CLI, so the steps (src/steps/options.ts) and the command table
// (src/command-table.ts) can declare theirs.

/** One option of a command, as node:util parseArgs takes it plus a description for --help. */
export interface OptionSpec {
  type: 'string' | 'boolean';
  short?: string;
  multiple?: boolean;
  default?: string | boolean | string[];
  /** For a string option that takes a whole number: the smallest and largest value accepted. */
  range?: [number, number];
  /** For a string option: the only values accepted (each one, for a repeatable option). */
  choices?: readonly string[];
  /** Placeholder shown in help, e.g. NAME. */
  arg?: string;
  /** The option's earlier name: typing it is a usage error that names this one. */
  formerly?: string;
  description: string;
}

/** An example for --help and the docs: the command line, and what it does. */
export type Example = readonly [command: string, does: string];

/** The headings of the top-level help a command sits under. */
export type CommandGroupKey = 'machines' | 'project' | 'cluster' | 'day-two' | 'other';
