// The end of a run: a summary per step and machine for people, or one JSON object for scripts.
import type { HostResult, RunResult } from '../engine/types.ts';
import type { Palette } from './terminal.ts';
import { plural, withoutHost } from './reporter.ts';

/** Totals and `ok` from the results of every step on every host. */
export function summarize(results: HostResult[]): RunResult {
  const failed = results.filter((r) => r.status === 'failed').length;
  const changed = results.reduce((n, r) => n + r.changes, 0);
  return { ok: failed === 0, changed, failed, results };
}

/** The JSON object printed with --json: exactly {ok, changed, failed, results}. */
export function summaryJson(run: RunResult): string {
  const results = run.results.map((r) => ({
    step: r.step,
    machine: r.machine,
    status: r.status,
    changes: r.changes,
    ...(r.error !== undefined ? { error: r.error } : {}),
  }));
  return JSON.stringify({ ok: run.ok, changed: run.changed, failed: run.failed, results });
}

/** A table of step / machine / status, then totals. */
export function summaryLines(run: RunResult, colors: Palette, dryRun: boolean): string[] {
  if (run.results.length === 0) return ['Summary: no machine was selected for these steps'];
  const stepW = Math.max(4, ...run.results.map((r) => r.step.length));
  const hostW = Math.max(7, ...run.results.map((r) => r.machine.length));
  const paint = { changed: colors.yellow, unchanged: colors.green, failed: colors.red, skipped: colors.dim };
  const lines = [dryRun ? 'Summary (dry run: nothing was changed):' : 'Summary:'];
  for (const r of run.results) {
    const count = r.changes ? ` ${plural(r.changes, dryRun ? 'planned change' : 'change')}` : '';
    const why = r.status === 'failed' || r.status === 'skipped' ? `  ${firstLine(withoutHost(r.error ?? '', r.machine))}` : '';
    lines.push(`  ${r.step.padEnd(stepW)}  ${r.machine.padEnd(hostW)}  ${paint[r.status](r.status.padEnd(9))}${count}${why}`);
  }
  const n = (s: HostResult['status']) => run.results.filter((r) => r.status === s).length;
  lines.push(
    `${n('changed')} changed, ${n('unchanged')} unchanged, ${n('failed')} failed, ${n('skipped')} skipped` +
      ` (${plural(run.changed, dryRun ? 'planned change' : 'change')})`,
  );
  return lines;
}

function firstLine(text: string): string {
  return text.split('\n')[0]!;
}
