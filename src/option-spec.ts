// How a command option is described: the shape node:util parseArgs takes, plus what --help says.
// Below the CLI, so the steps can declare the options they add (src/steps/options.ts).

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
  description: string;
}
