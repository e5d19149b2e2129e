// Progress of a run as the engine reports it: a step starts, each host finishes, the step ends.
// Plain lines when output is not an interactive terminal; listr2 (listr-reporter.ts) when it is.
import type { HostResult } from './results.ts';
import type { Logger } from './logger.ts';

/** A step as the UI names it. */
export interface StepInfo {
  name: string;
  title: string;
}

/** Receives the engine's progress events. */
export interface Reporter {
  stepStarted(step: StepInfo, hosts: string[]): void;
  /** `details`: one line per change (with diffs in dry-run), already redacted by the engine. */
  hostFinished(step: StepInfo, result: HostResult, details: string[]): void;
  stepFinished(step: StepInfo, results: HostResult[]): Promise<void>;
  /** What is happening to a machine right now, e.g. `connecting to root@10.0.0.1:22` or a retry; shown at once. */
  hostNote(host: string, text: string): void;
}

/** One word (plus count) for a result, as shown per machine. */
export function statusText(r: HostResult, dryRun: boolean): string {
  if (r.unreachable) return 'unreachable';
  if (r.status === 'failed') return `failed${r.changes ? ` after ${plural(r.changes, 'change')}` : ''}`;
  if (r.status === 'skipped') return 'skipped';
  if (r.status === 'unchanged') return 'unchanged';
  return dryRun ? `would change (${plural(r.changes, 'change')})` : `changed (${plural(r.changes, 'change')})`;
}

/** `1 change`, `2 changes`. */
export function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** A reporter that prints plain lines through the logger; every per-machine line names the machine. */
export function plainReporter(logger: Logger, dryRun: boolean): Reporter {
  const c = logger.colors;
  return {
    stepStarted(step, hosts) {
      logger.info(c.bold(`==> ${step.name}: ${step.title}`) + c.dim(` (${plural(hosts.length, 'machine')})`));
    },
    hostFinished(step, result, details) {
      const log = logger.host(result.machine);
      const text = `${step.name}: ${statusText(result, dryRun)}`;
      // The error itself is shown once, in the summary at the end.
      if (result.status === 'failed') log.error(text);
      else log.info(result.status === 'changed' ? c.yellow(text) : result.status === 'unchanged' ? c.green(text) : text);
      for (const line of details) log.info(`  ${line}`);
    },
    async stepFinished() {},
    hostNote(host, text) {
      logger.host(host).info(c.dim(text));
    },
  };
}

/** Indents every line by two spaces. */
export function indent(text: string, by = '  '): string {
  return text
    .split('\n')
    .map((l) => by + l)
    .join('\n');
}

/** An error without its leading `machine: ` when the line that shows it already names the machine. */
export function withoutHost(error: string, machine: string): string {
  return error.startsWith(`${machine}: `) ? error.slice(machine.length + 2) : error;
}
