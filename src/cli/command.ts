// The shape of a CLI command: its options (which double as its --help) and its run function.
import type { Writable } from 'node:stream';
import { InputError } from '../errors.ts';

export type { OptionSpec } from '../option-spec.ts';
import type { OptionSpec } from '../option-spec.ts';

/** What a command's run function receives: parsed options, positionals and the I/O to use. */
export interface CliContext {
  values: Record<string, string | boolean | string[] | undefined>;
  positionals: string[];
  stdout: Writable;
  stderr: Writable;
  cwd: string;
  env: NodeJS.ProcessEnv;
}

/** A command the user can type: `hardway <name> ...`. */
export interface CliCommand {
  /** Words the user types, e.g. 'certs check' or 'lab up'. */
  name: string;
  summary: string;
  /** Positional arguments for the usage line, e.g. 'MACHINE [COMMAND...]'. */
  args?: string;
  /** Extra paragraphs for --help. */
  details?: string;
  options: Record<string, OptionSpec>;
  /**
   * For a command with --json: the fields of its object, empty, that it prints with `ok: false`
   * and `error` when it cannot run (e.g. {findings: []}), so a script reads one shape.
   */
  jsonFields?: Record<string, unknown>;
  run(ctx: CliContext): Promise<number>;
}

/** Options every command that reads the inventory takes. */
export const INVENTORY_OPTIONS: Record<string, OptionSpec> = {
  machines: {
    type: 'string',
    arg: 'FILE',
    default: 'machines.txt',
    description: 'the inventory; cluster.yaml, pki/ and known_hosts are looked up beside it',
  },
};

/** Writes one line to a stream. */
export function say(stream: Writable, line = ''): void {
  stream.write(line + '\n');
}

/**
 * Checks every option with a `range` (a whole number within it) or `choices` (one of them), else a
 * usage error (exit 2).
 */
export function checkRanges(options: Record<string, OptionSpec>, values: CliContext['values']): void {
  for (const [name, spec] of Object.entries(options)) {
    const v = values[name];
    const given = Array.isArray(v) ? v : typeof v === 'string' ? [v] : [];
    const bad = spec.choices ? given.find((g) => !spec.choices!.includes(g)) : undefined;
    if (bad !== undefined) throw new InputError(`--${name} does not know "${bad}"`, `it takes: ${spec.choices!.join(', ')}`);
    if (!spec.range || typeof v !== 'string') continue;
    const [min, max] = spec.range;
    if (!/^\d+$/.test(v) || Number(v) < min || Number(v) > max) {
      throw new InputError(`--${name} must be a whole number from ${min} to ${max}, got "${v}"`);
    }
  }
}
