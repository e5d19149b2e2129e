// Help text, generated from the command table and each command's options and examples, wrapped
// to the width of the terminal it is printed on.
import type { CliCommand, OptionSpec } from './command.ts';
import type { CommandEntry, CommandGroup } from './entry.ts';
import { twoColumns, wrap, wrapBlock } from '../ui/wrap.ts';

/** The top-level help: usage, every command under its group's heading, and where to read more. */
export function topHelp(commands: readonly CommandEntry[], groups: readonly CommandGroup[], width: number): string {
  // One column width for every group, so the summaries line up down the whole page.
  const names = Math.max(...commands.map((c) => c.name.length));
  const rows = (list: ReadonlyArray<readonly [string, string]>) => twoColumns(list, width, '  ', names, true);
  const listed = (key: CommandGroup['key']) => commands.filter((c) => c.group === key).map((c) => [c.name, c.summary] as const);
  return [
    ...wrap('hardway: build a Kubernetes cluster the hard way over SSH, idempotently.', width),
    '',
    'Usage: hardway <command> [options]',
    ...groups.flatMap((g) => ['', `${g.title}:`, ...rows(listed(g.key))]),
    '',
    'Other:',
    ...rows([['help COMMAND', 'the options and examples of a command'], ...listed('other')]),
    '',
    ...wrap('Run "hardway COMMAND --help" (or "hardway help COMMAND") for its options and examples. README.md is the guide; docs/ has the details.', width),
  ].join('\n');
}

/** The help of a group of commands (`hardway lab`): its subcommands with their summaries. */
export function groupHelp(prefix: string, summary: string, commands: readonly CommandEntry[], width: number): string {
  return [
    `Usage: hardway ${prefix} <command> [options]`,
    '',
    ...wrap(summary, width),
    '',
    'Commands:',
    ...twoColumns(commands.map((c) => [c.name, c.summary] as const), width, '  ', 23),
    '',
    ...wrap(`Run "hardway ${prefix} <command> --help" for its options and examples.`, width),
  ].join('\n');
}

/** One command's help: usage line, summary, details, options, subcommands and examples. */
export function commandHelp(cmd: CliCommand, width: number, subcommands: readonly CommandEntry[] = []): string {
  const opts = Object.entries(cmd.options).map(([name, spec]) => [optionLabel(name, spec), describe(spec)] as const);
  opts.push(['-h, --help', 'show this help']);
  return [
    ...wrap(`Usage: hardway ${cmd.name} [options]${cmd.args ? ' ' + cmd.args : ''}`, width, '', '         '),
    '',
    ...wrap(cmd.summary, width),
    ...(cmd.details ? ['', ...wrapBlock(cmd.details, width)] : []),
    '',
    'Options:',
    ...twoColumns(opts, width, '  ', 30),
    ...(subcommands.length ? ['', 'Subcommands:', ...twoColumns(subcommands.map((c) => [c.name, c.summary] as const), width, '  ', 23)] : []),
    '',
    'Examples:',
    ...cmd.examples.flatMap(([line, does], i) => [...(i > 0 ? [''] : []), ...wrap(does, width, '  # ', '  # '), ...wrap(line, width, '  ', '      ')]),
  ].join('\n');
}

function optionLabel(name: string, spec: OptionSpec): string {
  const short = spec.short ? `-${spec.short}, ` : '    ';
  const arg = spec.type === 'string' ? ` ${spec.arg ?? 'VALUE'}` : '';
  return `${short}--${name}${arg}`;
}

function describe(spec: OptionSpec): string {
  const extra: string[] = [];
  if (spec.multiple) extra.push('repeatable');
  if (spec.default !== undefined && spec.default !== false && !(Array.isArray(spec.default) && spec.default.length === 0))
    extra.push(`default: ${String(spec.default)}`);
  return extra.length ? `${spec.description} (${extra.join('; ')})` : spec.description;
}
