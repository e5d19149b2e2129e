// The `hardway ...` command lines written in documents and in --help examples, and what is wrong
// with one: a command or an option hardway does not have, an option without its value, a value
// the option does not take (--only a step the command lacks), arguments the command does not take. Read with the CLI's own resolution
// (src/cli/resolve.ts) and each command's own options, so a renamed flag cannot linger in the docs.
import { parseArgs } from 'node:util';
import { COMMAND_ALIASES, COMMANDS, loadCommand } from '../../src/commands/index.ts';
import { isRemote, stepNames } from '../../src/cli/entry.ts';
import { checkRanges, type CliCommand } from '../../src/cli/command.ts';
import { resolveArgs } from '../../src/cli/resolve.ts';

/** One command line found in a document: where, and its words after `hardway`. */
export interface FoundLine {
  where: string;
  text: string;
  words: string[];
}

/** Shell words of a line (quotes removed), cut at a comment. */
function shellWords(line: string): string[] {
  const words: string[] = [];
  const re = /'([^']*)'|"([^"]*)"|(#.*$)|(\S+)/g;
  for (let m = re.exec(line); m; m = re.exec(line)) {
    if (m[3] !== undefined && (m.index === 0 || /\s/.test(line[m.index - 1]!))) break;
    words.push(m[1] ?? m[2] ?? m[3] ?? m[4]!);
  }
  return words;
}

const OPERATORS = new Set(['&&', '||', '|', ';', '>', '2>', '>>', '<', '&']);

/** The `hardway` invocations in one line of shell: each segment between operators whose command is hardway. */
export function hardwayCalls(line: string): string[][] {
  const calls: string[][] = [];
  let segment: string[] = [];
  const flush = () => {
    let w = segment;
    // What may stand before the command: a prompt, sudo, npx (and its --package=DIR), variables set for it, a subshell.
    while (w.length && (w[0] === '$' || w[0] === 'sudo' || w[0] === 'npx' || /^--package=/.test(w[0]!) || w[0] === '(' || /^[A-Z_]+=/.test(w[0]!))) w = w.slice(1);
    if (w.length && /(^|\/)hardway(\.mjs)?$/.test(w[0]!)) calls.push(w.slice(1).map((x) => x.replace(/[;)]$/, '')));
    segment = [];
  };
  for (const word of shellWords(line)) {
    if (OPERATORS.has(word)) flush();
    else if (word.endsWith(';')) {
      segment.push(word.slice(0, -1));
      flush();
    } else segment.push(word);
  }
  flush();
  return calls;
}

/** Every `hardway ...` line of a Markdown text: in code blocks (shell lines) and in inline code. */
export function commandLinesOf(markdown: string, file: string): FoundLine[] {
  const found: FoundLine[] = [];
  let fence: string | undefined;
  for (const [i, line] of markdown.split('\n').entries()) {
    const where = `${file}:${i + 1}`;
    const open = /^\s*(```+|~~~+)\s*(\S*)/.exec(line);
    if (open) {
      fence = fence === undefined ? (open[2] || 'text') : undefined;
      continue;
    }
    if (fence !== undefined) {
      if (['sh', 'bash', 'shell', 'console', 'text'].includes(fence)) for (const words of hardwayCalls(line)) found.push({ where, text: line.trim(), words });
      continue;
    }
    for (const m of line.matchAll(/`([^`]+)`/g)) for (const words of hardwayCalls(m[1]!)) found.push({ where, text: m[1]!, words });
  }
  return found;
}

/** A word that stands for something to fill in (COMMAND, <command>, NAME...): a command line with one there is a pattern, not checked. */
const PLACEHOLDER = /^(<[^>]+>|[A-Z][A-Z_-]*|\.\.\.|\[.*)$/;

/**
 * What is wrong with the words after `hardway`: an unknown command, an option the command does not
 * have, an option's value missing or not one it takes, positionals the command does not take (or
 * too few, too many). Empty when nothing is.
 */
export async function problemsOf(words: string[]): Promise<string[]> {
  const named = words[0] === 'help' ? words.slice(1) : words;
  if (named.length === 0 || PLACEHOLDER.test(named[0]!)) return [];
  const r = resolveArgs(words, { commands: COMMANDS, aliases: COMMAND_ALIASES });
  if (r.kind === 'unknown') return [`unknown command "${r.typed}"`];
  if (r.kind !== 'command') return [];
  const cmd = await loadCommand(r.entry);
  const shorts = new Set(['h', ...Object.values(cmd.options).flatMap((o) => (o.short ? [o.short] : []))]);
  const problems: string[] = [];
  for (const w of r.rest) {
    if (w === '--') break;
    if (w.startsWith('--')) {
      const name = w.slice(2).split('=')[0]!;
      if (name !== 'help' && !Object.hasOwn(cmd.options, name)) problems.push(`"hardway ${cmd.name}" has no option --${name}`);
    } else if (/^-[A-Za-z]+$/.test(w)) {
      for (const c of w.slice(1)) if (!shorts.has(c)) problems.push(`"hardway ${cmd.name}" has no option -${c}`);
    }
  }
  // A usage pattern ([--node NAME]) names the options, not values to check.
  if (problems.length || r.rest.some((w) => w.startsWith('['))) return problems;
  return valueProblems(cmd, r.entry, r.rest);
}

/** The positionals a usage line (CliCommand.args) allows: how many at least and at most (COMMAND... any number). */
function positionalRange(args: string | undefined): [number, number] {
  if (args === undefined) return [0, 0];
  const before = args;
  const names = [...before.matchAll(/[A-Z][A-Z_]*/g)];
  // `SCENARIO | --list`: one form or the other, so none is required.
  const required = before.includes(' | ') ? 0 : before.replace(/\[[^\]]*\]/g, '').match(/[A-Z][A-Z_]*/g)?.length ?? 0;
  return [required, /\.\.\./.test(before) ? Infinity : names.length];
}

/** What parsing the words as the CLI does finds wrong: a value missing or not taken, an argument too many or too few. */
function valueProblems(cmd: CliCommand, entry: (typeof COMMANDS)[number], rest: string[]): string[] {
  const end = rest.indexOf('--');
  const own = end === -1 ? rest : rest.slice(0, end);
  const what = `"hardway ${cmd.name}"`;
  let parsed;
  try {
    parsed = parseArgs({ args: own, options: { ...cmd.options, help: { type: 'boolean', short: 'h' } }, allowPositionals: true, strict: true });
  } catch (e) {
    return [`${what}: ${(e as Error).message.split('.')[0]}`];
  }
  const problems: string[] = [];
  try {
    checkRanges(cmd.options, parsed.values as Parameters<typeof checkRanges>[1]);
  } catch (e) {
    problems.push(`${what}: ${(e as Error).message}`);
  }
  if (isRemote(entry)) {
    const steps: string[] = stepNames(entry.steps);
    for (const s of ((parsed.values as Record<string, unknown>).only as string[] | undefined) ?? []) if (!steps.includes(s) && !PLACEHOLDER.test(s)) problems.push(`${what} has no step "${s}" (--only)`);
  }
  const [min, max] = positionalRange(cmd.args);
  const n = parsed.positionals.length;
  if (parsed.values.help !== true && (n < min || n > max)) {
    problems.push(`${what} takes ${max === 0 ? 'no arguments' : max === Infinity ? `at least ${min} argument(s)` : min === max ? `${min} argument(s)` : `${min} to ${max} arguments`} (${cmd.args ?? 'none'}), got ${n}: ${parsed.positionals.join(' ') || '(none)'}`);
  }
  return problems;
}

/** The command a line runs (its name in the command table), or undefined for help, a group or nothing known. */
export function commandOf(words: string[]): string | undefined {
  const r = resolveArgs(words, { commands: COMMANDS, aliases: COMMAND_ALIASES });
  return r.kind === 'command' ? r.entry.name : undefined;
}
