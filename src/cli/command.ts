// The shape of a CLI command: its options (which double as its --help) and its run function, and
// the options that mean the same on every command (the project, SSH, --json), declared once.
import { resolve } from 'node:path';
import type { Writable } from 'node:stream';
import { InputError } from '../errors.ts';
import { quote } from '../shell.ts';
import { closest, didYouMean } from '../suggest.ts';

export type { Example, OptionSpec } from '../option-spec.ts';
import type { Example, OptionSpec } from '../option-spec.ts';

/** What a command's run function receives: parsed options, positionals and the I/O to use. */
export interface CliContext {
  values: Record<string, string | boolean | string[] | undefined>;
  positionals: string[];
  stdout: Writable;
  stderr: Writable;
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** The arguments as typed after `hardway`, for messages that show the command again (sudo ...). */
  argv?: readonly string[];
}

/** A command the user can type: `hardway <name> ...`. */
export interface CliCommand {
  /** Words the user types, e.g. 'certs check' or 'lab up'. */
  name: string;
  summary: string;
  /** Positional arguments for the usage line, e.g. 'MACHINE [COMMAND...]'. */
  args?: string;
  /** Extra paragraphs for --help (blank lines between paragraphs; they are wrapped to the terminal). */
  details?: string;
  options: Record<string, OptionSpec>;
  /** At least one: the Examples section of --help. */
  examples: readonly Example[];
  /**
   * For a command with --json: the fields of its object, empty, that it prints with `ok: false`
   * and `error` when it cannot run (e.g. {findings: []}), so a script reads one shape.
   */
  jsonFields?: Record<string, unknown>;
  run(ctx: CliContext): Promise<number>;
}

/** What a command's own module declares: everything but its summary, which is the command table's (src/commands/index.ts). */
export type CommandModule = Omit<CliCommand, 'summary'>;

/** Options every command that works on a project takes: where its directory and machines file are. */
export const INVENTORY_OPTIONS: Record<string, OptionSpec> = {
  dir: {
    type: 'string',
    arg: 'DIR',
    description: 'the project directory: machines.txt, cluster.yaml, pki/, downloads/ (default: the current directory)',
  },
  machines: {
    type: 'string',
    arg: 'FILE',
    description: 'the machines file, if not DIR/machines.txt; the project directory is the one it is in',
  },
};

/** Options every command that logs in to the machines over SSH takes. */
export const SSH_OPTIONS: Record<string, OptionSpec> = {
  identity: { type: 'string', short: 'i', multiple: true, arg: 'FILE', description: 'private key to offer first' },
  'accept-new-host-keys': { type: 'boolean', description: 'pin the host key of a machine not yet in known_hosts (a changed key is always refused)' },
  verbose: { type: 'boolean', short: 'v', description: 'show every connection attempt and remote command as it runs' },
};

/** The --json option, with what the one object holds. */
export function jsonOption(shape: string): OptionSpec {
  return { type: 'boolean', description: `print one JSON object on stdout, also when the command fails (ok: false, error): ${shape}` };
}

/** The option a destructive command needs before it changes anything. */
export function yesOption(what: string): OptionSpec {
  return { type: 'boolean', description: `yes, do it: ${what} (--dry-run shows what, changing nothing)` };
}

/** The machines file a command works on: --machines FILE, else DIR/machines.txt (--dir), else ./machines.txt. */
export function machinesFile(ctx: Pick<CliContext, 'values' | 'cwd'>): string {
  const { dir, machines } = ctx.values;
  if (typeof dir === 'string' && typeof machines === 'string') {
    throw new InputError('--dir and --machines both name the project', 'give one: --dir DIR (its machines.txt), or --machines FILE (the directory it is in)');
  }
  if (typeof machines === 'string') return resolve(ctx.cwd, machines);
  return resolve(ctx.cwd, typeof dir === 'string' ? dir : '.', 'machines.txt');
}

/** True when the command line named the project (--dir or --machines) rather than using the current directory. */
export function projectNamed(ctx: Pick<CliContext, 'values'>): boolean {
  return typeof ctx.values.dir === 'string' || typeof ctx.values.machines === 'string';
}

/** The options that name the project again in a command hardway suggests (' --dir x'), or ''. */
export function projectArgs(ctx: Pick<CliContext, 'values'>): string {
  const { dir, machines } = ctx.values;
  if (typeof machines === 'string') return ` --machines ${machines}`;
  return typeof dir === 'string' && dir !== '.' ? ` --dir ${dir}` : '';
}

/** The command line as the user typed it (quoted for a shell), for a hint that says to run it again differently. */
export function commandLine(ctx: Pick<CliContext, 'argv'>, name: string): string {
  return `hardway ${(ctx.argv ?? name.split(' ')).map(quote).join(' ')}`;
}

/**
 * The user's command line with `flag` added (before a `--`, whose words belong to another command),
 * for a refusal that asks for a flag: a line to copy. `drop` flags are taken out (--dry-run when
 * --yes is asked for); run under sudo, or for a command that needs `root` by a user who is not, it starts with sudo.
 */
export function commandLineWith(ctx: Pick<CliContext, 'argv' | 'env'>, name: string, flag: string, drop: readonly string[] = [], root = false): string {
  const words = [...(ctx.argv ?? name.split(' '))];
  const end = words.indexOf('--');
  const own = (end === -1 ? words : words.slice(0, end)).filter((w) => !drop.includes(w) && w !== flag);
  const line = commandLine({ argv: [...own, flag, ...(end === -1 ? [] : words.slice(end))] }, name);
  return ctx.env?.SUDO_USER || (root && process.getuid?.() !== 0) ? `sudo ${line}` : line;
}

/**
 * The refusal of a destructive command run without --yes (exit 2): what it would do, and the
 * command line again with --yes, and with --dry-run, to copy.
 */
export function needsYes(ctx: Pick<CliContext, 'argv' | 'env'>, name: string, wouldDo: string, opts: { root?: boolean } = {}): InputError {
  return new InputError(
    `"hardway ${name}" ${wouldDo}; it runs only with --yes`,
    // One command per line, at its end, so each can be copied whole (the second under the first's "hint: ").
    `run it again with --yes to do it: ${commandLineWith(ctx, name, '--yes', ['--dry-run'], opts.root)}\n` +
      `        or with --dry-run to see what it would do: ${commandLineWith(ctx, name, '--dry-run', ['--yes'], opts.root)}`,
  );
}

/** Writes one line to a stream. */
export function say(stream: Writable, line = ''): void {
  stream.write(line + '\n');
}

/** Prints a command's --json object: one line, so a script reads exactly one object from stdout. */
export function sayJson(stream: Writable, value: unknown): void {
  say(stream, JSON.stringify(value));
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
    if (bad !== undefined) {
      const near = didYouMean(closest(bad, spec.choices!));
      throw new InputError(`--${name} does not know "${bad}"`, `${near ? `${near} ` : ''}it takes: ${spec.choices!.join(', ')}`);
    }
    if (!spec.range || typeof v !== 'string') continue;
    const [min, max] = spec.range;
    if (!/^\d+$/.test(v) || Number(v) < min || Number(v) > max) {
      throw new InputError(`--${name} must be a whole number from ${min} to ${max}, got "${v}"`);
    }
  }
}
