// Help text, generated from the command table and each command's options.
import type { CliCommand, OptionSpec } from './command.ts';
import type { CommandEntry } from '../commands/entry.ts';

/** The top-level help: usage and every command with its summary. */
export function topHelp(commands: CommandEntry[]): string {
  const width = Math.max(...commands.map((c) => c.name.length));
  return [
    'hardway: build a Kubernetes cluster the hard way over SSH, idempotently.',
    '',
    'Usage: hardway <command> [options]',
    '',
    'Commands:',
    ...commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    '',
    'Run "hardway <command> --help" for the options of a command.',
  ].join('\n');
}

/** One command's help: usage line, summary, details and options. */
export function commandHelp(cmd: CliCommand): string {
  const opts = Object.entries(cmd.options).map(([name, spec]) => [optionLabel(name, spec), describe(spec)] as const);
  opts.push(['-h, --help', 'show this help']);
  const width = Math.max(...opts.map(([l]) => l.length));
  return [
    `Usage: hardway ${cmd.name} [options]${cmd.args ? ' ' + cmd.args : ''}`,
    '',
    cmd.summary,
    ...(cmd.details ? ['', cmd.details] : []),
    '',
    'Options:',
    ...opts.map(([l, d]) => `  ${l.padEnd(width)}  ${d}`),
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
