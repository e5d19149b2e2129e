// Argument parsing and exit codes; nothing else. 0 success, 1 failure, 2 usage or input error.
import type { Writable } from 'node:stream';
import { parseArgs } from 'node:util';
import { COMMAND_ALIASES, COMMANDS, GROUPS, loadCommand, SUBCOMMAND_GROUPS } from './commands/index.ts';
import { commandHelp, groupHelp, topHelp } from './cli/help.ts';
import { checkRanges, say, type CliCommand, type CliContext } from './cli/command.ts';
import { resolveArgs, subcommandsOf } from './cli/resolve.ts';
import { closest, didYouMean } from './suggest.ts';
import { packageRoot } from './cli/version.ts';
import { widthOf, wrapMessage } from './ui/wrap.ts';
import { handleInterrupts } from './cli/interrupt.ts';
import { errorJson, formatError, InputError, isExpectedError } from './errors.ts';
import { pathError } from './input-file.ts';
import { missingPackageMessage } from '../bin/missing-package.mjs';

/** Where main reads and writes; `errorWidth` wraps errors to that width instead of stderr's (tests compare messages whole). */
export type MainIo = Partial<Pick<CliContext, 'stdout' | 'stderr' | 'cwd' | 'env'>> & { errorWidth?: number };

/** Runs hardway with the given arguments and returns the exit code. */
export async function main(argv: string[], io: MainIo = {}): Promise<number> {
  const stdout = io.stdout ?? process.stdout;
  const stderr = io.stderr ?? process.stderr;
  const errorWidth = io.errorWidth ?? widthOf(stderr);
  const r = resolveArgs(argv, { commands: COMMANDS, aliases: COMMAND_ALIASES });
  // Help asked for goes to stdout (exit 0); help instead of a command that was not given, to stderr (exit 2).
  const helpOn = (asked: boolean) => (asked ? stdout : stderr);
  switch (r.kind) {
    case 'top':
      say(helpOn(r.asked), topHelp(COMMANDS, GROUPS, widthOf(helpOn(r.asked))));
      return r.asked ? 0 : 2;
    case 'group':
      say(helpOn(r.asked), groupHelp(r.prefix, SUBCOMMAND_GROUPS[r.prefix] ?? '', subcommandsOf(r.prefix, COMMANDS), widthOf(helpOn(r.asked))));
      return r.asked ? 0 : 2;
    case 'unknown': {
      if (r.typed.startsWith('-')) {
        say(stderr, wrapMessage(formatError(await optionWithoutCommand(r.typed)), errorWidth));
        return 2;
      }
      const near = didYouMean(r.near, (n) => `"hardway ${n}"`);
      say(stderr, wrapMessage(formatError(new InputError(`unknown command "${r.typed}"`, `${near ? `${near} ` : ''}"hardway --help" lists every command`)), errorWidth));
      return 2;
    }
  }
  const { entry, rest } = r;
  let cmd: CliCommand | undefined;
  try {
    cmd = await loadCommand(entry);
    if (r.help) {
      say(stdout, commandHelp(cmd, widthOf(stdout), subcommandsOf(cmd.name, COMMANDS)));
      return 0;
    }
    const parsed = parse(cmd, rest);
    checkRanges(cmd.options, parsed.values as CliContext['values']);
    return await cmd.run({
      values: parsed.values as CliContext['values'],
      positionals: parsed.positionals,
      stdout,
      stderr,
      cwd: io.cwd ?? process.cwd(),
      env: io.env ?? process.env,
      argv,
    });
  } catch (e) {
    return reportFailure(e, { stdout, stderr, errorWidth }, cmd?.options.json && rest.includes('--json') ? cmd : undefined);
  }
}

/** Runs hardway as the process itself (bin/hardway.mjs): main, with SIGINT, SIGTERM and SIGHUP aborting running commands and exiting 130, 143, 129. */
export async function runProcess(argv: string[]): Promise<number> {
  const stop = handleInterrupts();
  try {
    return await main(argv);
  } finally {
    stop();
  }
}

/** The error for an option typed before any command (`hardway --dry-rn`): the option closest to it, and a command that takes it. */
async function optionWithoutCommand(typed: string): Promise<InputError> {
  const name = typed.replace(/^-+/, '').replace(/=.*$/, '');
  const commands = await Promise.all(COMMANDS.map(async (entry) => ({ name: entry.name, options: Object.keys((await loadCommand(entry)).options) })));
  const near = closest(name, [...new Set(commands.flatMap((c) => c.options))])[0];
  const example = near ? commands.find((c) => c.options.includes(near)) : undefined;
  return new InputError(`"${typed}" is an option; options follow a command`,
    `${near && example ? `did you mean --${near}? e.g. "hardway ${example.name} --${near}"; ` : ''}hardway COMMAND [options]: "hardway --help" lists every command`);
}

/** The command's options and positionals, or a usage error that names the option closest to a mistyped one. */
function parse(cmd: CliCommand, rest: string[]) {
  try {
    return parseArgs({ args: rest, options: cmd.options, allowPositionals: cmd.args !== undefined, strict: true });
  } catch (e) {
    const help = `"hardway ${cmd.name} --help" lists its options`;
    const unknown = /^Unknown option '(-{1,2})([^'=]+)/.exec((e as Error).message);
    if (unknown) {
      const [, dashes, name] = unknown as unknown as [string, string, string];
      const renamed = Object.entries(cmd.options).find(([, spec]) => spec.formerly === name);
      if (renamed) throw new InputError(`--${name} is now --${renamed[0]} for "hardway ${cmd.name}"`, `--${renamed[0]}${renamed[1].arg ? ` ${renamed[1].arg}` : ''}: ${renamed[1].description}`);
      const near = dashes === '--' ? didYouMean(closest(name, Object.keys(cmd.options)), (n) => `--${n}`) : undefined;
      throw new InputError(`unknown option ${dashes}${name} for "hardway ${cmd.name}"`, `${near ? `${near} ` : ''}${help}`);
    }
    // A word where no argument belongs: for a command that picks machines with --node, that is what was meant.
    const positional = /^Unexpected argument '(.*)'\. This command does not take positional arguments/s.exec((e as Error).message);
    if (positional) {
      const word = positional[1]!;
      const near = cmd.options.node && !word.startsWith('-') ? `did you mean --node ${word}? ` : '';
      throw new InputError(`"hardway ${cmd.name}" takes no arguments, got "${word}"`, `${near}${help}`);
    }
    // A value that starts with a dash (--ready-timeout -5): one line that says what the option needs.
    const dashed = /^Option '--([^' ]+)[^']*' argument is ambiguous/.exec((e as Error).message);
    if (dashed) {
      const name = dashed[1]!;
      const value = rest[rest.indexOf(`--${name}`) + 1] ?? '';
      const spec = cmd.options[name];
      if (spec?.range) throw new InputError(`--${name} must be a whole number from ${spec.range[0]} to ${spec.range[1]}, got "${value}"`, help);
      throw new InputError(`--${name} needs a value, and "${value}" looks like an option`, `if "${value}" is the value, write --${name}=${value}; ${help}`);
    }
    throw new InputError((e as Error).message.replace(/\. To specify.*$/s, '').split('\n')[0]!, help);
  }
}

/**
 * How a command that threw ends: the error in one line and its hint on stderr (a stack trace only
 * for a bug), and for a command run with --json (`json`) its one object on stdout, `ok: false` with
 * the error, whatever stopped it. Returns the exit code.
 */
export function reportFailure(e: unknown, io: { stdout: Writable; stderr: Writable; errorWidth?: number }, json?: Pick<CliCommand, 'jsonFields'>): number {
  // A path that is not what it must be (a directory where a file belongs, no permission, no
  // space left) that no check caught first: still named in one line, without a stack trace.
  const known = isExpectedError(e) ? e : pathError(e);
  if (json) say(io.stdout, JSON.stringify({ ok: false, ...json.jsonFields, error: errorJson(known ?? e) }));
  if (known) {
    // Wrapped to the terminal (80 columns when stderr is not one), like help.
    say(io.stderr, wrapMessage(formatError(known), io.errorWidth ?? widthOf(io.stderr)));
    return known.exitCode;
  }
  // A package that a lazily loaded command needs is missing: node_modules/ is incomplete.
  const missing = missingPackageMessage(e, packageRoot());
  say(io.stderr, missing ?? `internal error (a bug in hardway): ${(e as Error)?.stack ?? String(e)}`);
  return 1;
}
