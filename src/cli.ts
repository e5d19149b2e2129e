// Argument parsing and exit codes; nothing else. 0 success, 1 failure, 2 usage or input error.
import type { Writable } from 'node:stream';
import { parseArgs } from 'node:util';
import { COMMANDS, loadCommand, type CommandEntry } from './commands/index.ts';
import { commandHelp, topHelp } from './cli/help.ts';
import { checkRanges, say, type CliCommand, type CliContext } from './cli/command.ts';
import { errorJson, formatError, InputError, isExpectedError } from './errors.ts';
import { pathError } from './input-file.ts';

/** Runs hardway with the given arguments and returns the exit code. */
export async function main(argv: string[], io: Partial<Pick<CliContext, 'stdout' | 'stderr' | 'cwd' | 'env'>> = {}): Promise<number> {
  const stdout = io.stdout ?? process.stdout;
  const stderr = io.stderr ?? process.stderr;
  if (argv.length === 0 || argv[0] === '--help' || argv[0] === '-h' || argv[0] === 'help') {
    say(argv.length === 0 ? stderr : stdout, topHelp(COMMANDS));
    return argv.length === 0 ? 2 : 0;
  }
  if (argv[0] === '--version') {
    say(stdout, '0.1.0');
    return 0;
  }
  const entry = findCommand(argv);
  if (!entry) {
    say(stderr, `error: unknown command "${argv[0]}"\n  hint: run "hardway --help" for the list of commands`);
    return 2;
  }
  const rest = argv.slice(entry.name.split(' ').length);
  let cmd: CliCommand | undefined;
  try {
    cmd = await loadCommand(entry);
    if (rest.includes('--help') || rest.includes('-h')) {
      say(stdout, commandHelp(cmd));
      return 0;
    }
    let parsed;
    try {
      parsed = parseArgs({ args: rest, options: cmd.options, allowPositionals: cmd.args !== undefined, strict: true });
    } catch (e) {
      throw new InputError((e as Error).message.replace(/\. To specify.*$/s, ''), `run "hardway ${cmd.name} --help" for its options`);
    }
    checkRanges(cmd.options, parsed.values as CliContext['values']);
    return await cmd.run({
      values: parsed.values as CliContext['values'],
      positionals: parsed.positionals,
      stdout,
      stderr,
      cwd: io.cwd ?? process.cwd(),
      env: io.env ?? process.env,
    });
  } catch (e) {
    return reportFailure(e, { stdout, stderr }, cmd?.options.json && rest.includes('--json') ? cmd : undefined);
  }
}

/**
 * How a command that threw ends: the error in one line and its hint on stderr (a stack trace only
 * for a bug), and for a command run with --json (`json`) its one object on stdout, `ok: false` with
 * the error, whatever stopped it. Returns the exit code.
 */
export function reportFailure(e: unknown, io: { stdout: Writable; stderr: Writable }, json?: Pick<CliCommand, 'jsonFields'>): number {
  // A path that is not what it must be (a directory where a file belongs, no permission, no
  // space left) that no check caught first: still named in one line, without a stack trace.
  const known = isExpectedError(e) ? e : pathError(e);
  if (json) say(io.stdout, JSON.stringify({ ok: false, ...json.jsonFields, error: errorJson(known ?? e) }));
  if (known) {
    say(io.stderr, formatError(known));
    return known.exitCode;
  }
  say(io.stderr, `internal error (a bug in hardway): ${(e as Error)?.stack ?? String(e)}`);
  return 1;
}

/** The longest command name that the arguments start with ('certs check' before 'certs'). */
function findCommand(argv: string[]): CommandEntry | undefined {
  const byLength = [...COMMANDS].sort((a, b) => b.name.split(' ').length - a.name.split(' ').length);
  return byLength.find((c) => c.name.split(' ').every((w, i) => argv[i] === w));
}
