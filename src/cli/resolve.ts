// What the words after `hardway` ask for: a command (the longest name they start with), a group's
// list of commands (`hardway lab`), help, or nothing known, with the names closest
// to what was typed.
import type { CommandEntry } from './entry.ts';
import { closest } from '../suggest.ts';

/** The outcome of reading the command words. */
export type Resolution =
  | { kind: 'top'; asked: boolean }
  | { kind: 'group'; prefix: string; asked: boolean }
  | { kind: 'command'; entry: CommandEntry; rest: string[]; help: boolean }
  | { kind: 'unknown'; typed: string; near: string[] };

/** The table of commands and the words people type for them, as resolve needs it. */
export interface CommandTable {
  commands: readonly CommandEntry[];
  aliases: Readonly<Record<string, string>>;
}

const HELP = new Set(['--help', '-h']);
// `version` itself is a command of the table (with --help and --json); these are its short forms.
const VERSION = new Set(['--version', '-V']);

/** Reads the command words of `argv`. */
export function resolveArgs(argv: readonly string[], table: CommandTable): Resolution {
  const [first, ...after] = argv;
  if (first === undefined) return { kind: 'top', asked: false };
  if (HELP.has(first)) return { kind: 'top', asked: true };
  if (VERSION.has(first)) return resolveArgs(['version', ...after], table);
  if (first === 'help') {
    const words = after.filter((a) => !HELP.has(a));
    if (words.length === 0) return { kind: 'top', asked: true };
    const r = resolveWords(words, table);
    return r.kind === 'command' ? { ...r, help: true } : r.kind === 'group' ? { ...r, asked: true } : r;
  }
  const r = resolveWords(argv, table);
  if (r.kind !== 'command') return r;
  // --help before a `--` asks for help; after it, it belongs to the command (lab ssh node-0 -- ls -h).
  const end = r.rest.indexOf('--');
  const own = end === -1 ? r.rest : r.rest.slice(0, end);
  return { ...r, help: own.some((a) => HELP.has(a)) };
}

/** The command, or group, the words name; else the names closest to them. */
function resolveWords(argv: readonly string[], table: CommandTable): Resolution {
  const words = (name: string) => name.split(' ');
  const starts = (name: string) => words(name).every((w, i) => argv[i] === w);
  const entry = [...table.commands].sort((a, b) => words(b.name).length - words(a.name).length).find((c) => starts(c.name));
  const n = entry ? words(entry.name).length : 0;
  const next = argv[n];
  if (entry) {
    const subcommands = subcommandsOf(entry.name, table.commands).filter((c) => words(c.name).length === n + 1);
    // A word after a command that has subcommands (certs check) and is close to one of them is a
    // typo of it, not an argument: "certs chek".
    if (next !== undefined && !next.startsWith('-') && subcommands.length > 0) {
      const near = closest(next, subcommands.map((c) => words(c.name)[n]!));
      if (near.length > 0 && !near.includes(next)) return { kind: 'unknown', typed: argv.slice(0, n + 1).join(' '), near: near.map((w) => `${entry.name} ${w}`) };
    }
    return { kind: 'command', entry, rest: argv.slice(n), help: false };
  }
  // The longest group the words start (`etcd snapshot` before `etcd`).
  const groups = groupPrefixes(table.commands);
  const group = groups.filter((g) => words(g).every((w, i) => argv[i] === w)).sort((a, b) => words(b).length - words(a).length)[0];
  if (group !== undefined) {
    const g = words(group).length;
    const word = argv[g];
    if (word === undefined || word.startsWith('-')) return { kind: 'group', prefix: group, asked: argv.slice(g).some((a) => HELP.has(a)) };
    const names = table.commands.filter((c) => c.name.startsWith(`${group} `)).map((c) => c.name);
    return { kind: 'unknown', typed: argv.slice(0, g + 1).join(' '), near: closest(argv.slice(0, g + 1).join(' '), names) };
  }
  // Nothing known: compare the first word, and the first two (cert check), with every name.
  const names = [...table.commands.map((c) => c.name), ...groups];
  const two = argv[1] !== undefined && !argv[1].startsWith('-') ? closest(`${argv[0]} ${argv[1]}`, names.filter((x) => x.includes(' '))) : [];
  const one = closest(argv[0]!, names, table.aliases);
  const near = [...new Set([...two, ...one])].slice(0, 3);
  return { kind: 'unknown', typed: two.length > 0 ? `${argv[0]} ${argv[1]}` : argv[0]!, near };
}

/** Every word sequence that starts several commands without being one (lab, etcd, etcd snapshot). */
export function groupPrefixes(commands: readonly CommandEntry[]): string[] {
  const names = new Set(commands.map((c) => c.name));
  const prefixes = new Set<string>();
  for (const c of commands) {
    const w = c.name.split(' ');
    for (let i = 1; i < w.length; i++) {
      const p = w.slice(0, i).join(' ');
      if (!names.has(p)) prefixes.add(p);
    }
  }
  return [...prefixes];
}

/** The commands whose names start with a prefix: `lab` gives lab up, lab status...; `etcd` the snapshot commands. */
export function subcommandsOf(prefix: string, commands: readonly CommandEntry[]): CommandEntry[] {
  return commands.filter((c) => c.name.startsWith(`${prefix} `));
}
