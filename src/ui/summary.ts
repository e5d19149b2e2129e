// The end of a run: one line per machine for people (ok, changed, failed, unreachable, like
// Ansible's recap), each error shown there once, in full; or one JSON object for scripts.
import type { HostResult, RunResult } from './results.ts';
import type { Palette } from './terminal.ts';
import { plural, withoutHost } from './reporter.ts';
import { DEFAULT_WIDTH, wrap } from './wrap.ts';

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
    ...(r.unreachable ? { unreachable: true } : {}),
  }));
  return JSON.stringify({ ok: run.ok, changed: run.changed, failed: run.failed, results });
}

/** How a machine ended the run. */
export type MachineOutcome = 'ok' | 'changed' | 'failed' | 'unreachable' | 'not run';

/** One machine's part of a run: its outcome, its changes, the steps that ran, the failure if any. */
export interface MachineRecap {
  machine: string;
  outcome: MachineOutcome;
  changes: number;
  /** Steps that ran on it (not skipped). */
  ran: number;
  /** Steps that were not run on it. */
  notRun: number;
  /** The step that failed and its error (once). */
  failure?: { step: string; error: string };
}

/** The results of a run per machine, in the order the machines first appear. */
export function recapOf(run: RunResult): MachineRecap[] {
  const machines = [...new Set(run.results.map((r) => r.machine))];
  return machines.map((machine) => {
    const mine = run.results.filter((r) => r.machine === machine);
    const failed = mine.find((r) => r.status === 'failed');
    const changes = mine.reduce((n, r) => n + r.changes, 0);
    const ran = mine.filter((r) => r.status !== 'skipped').length;
    const outcome: MachineOutcome = failed ? (failed.unreachable ? 'unreachable' : 'failed') : ran === 0 ? 'not run' : changes > 0 ? 'changed' : 'ok';
    return {
      machine, outcome, changes, ran, notRun: mine.length - ran,
      ...(failed ? { failure: { step: failed.step, error: withoutHost(failed.error ?? 'failed', machine) } } : {}),
    };
  });
}

/**
 * The summary people read: a line per machine (its outcome, what changed, or the step that failed
 * with the whole error under it), why steps were not run (each reason once), and the totals; each
 * wrapped to `width` (an error's own further lines, a command's stderr, are left as they are).
 */
export function summaryLines(run: RunResult, colors: Palette, dryRun: boolean, width = DEFAULT_WIDTH): string[] {
  if (run.results.length === 0) return ['Summary: no machine was selected for these steps'];
  const recap = recapOf(run);
  const hostW = Math.max(...recap.map((r) => r.machine.length));
  const word = (o: MachineOutcome) => (o === 'changed' && dryRun ? 'would change' : o);
  const wordW = Math.max(...recap.map((r) => word(r.outcome).length));
  const paint: Record<MachineOutcome, (s: string) => string> = { ok: colors.green, changed: colors.yellow, failed: colors.red, unreachable: colors.red, 'not run': colors.dim };
  const change = dryRun ? 'planned change' : 'change';
  const lines = [dryRun ? 'Summary (dry run: nothing was changed):' : 'Summary:'];
  for (const r of recap) {
    const notRun = r.notRun ? `; ${plural(r.notRun, 'step')} not run` : '';
    const what = r.failure
      ? `${r.failure.step}: ${r.failure.error.split('\n')[0]}`
      : r.outcome === 'not run' ? 'no step ran here'
        : r.changes > 0 ? `${plural(r.changes, change)} in ${plural(r.ran, 'step')}` : `${plural(r.ran, 'step')}, nothing to change`;
    const lead = `  ${r.machine.padEnd(hostW)}  ${word(r.outcome).padEnd(wordW)}  `;
    const [first, ...rest] = wrap(`${what}${notRun}`, width, lead, ' '.repeat(lead.length));
    // Painted after wrapping: the color codes take no room on the screen.
    lines.push(first!.replace(word(r.outcome), paint[r.outcome](word(r.outcome))), ...rest);
  }
  lines.push(...errorDetails(recap, width));
  lines.push(...notRunReasons(run).flatMap((l) => wrap(l, width, '', '  ')));
  const n = (o: MachineOutcome) => recap.filter((r) => r.outcome === o).length;
  const notRunAt = n('not run') ? `, ${n('not run')} not run` : '';
  lines.push(...wrap(`${n('ok')} ok, ${n('changed')} ${dryRun ? 'would change' : 'changed'}, ${n('failed')} failed, ${n('unreachable')} unreachable${notRunAt}` +
    ` (${plural(run.changed, change)})`, width, '', '  '));
  return lines;
}

/**
 * The rest of each failure (a command's stderr, then its hint) after the machines' lines, each
 * text once for every machine it belongs to: `node-0, node-1:` over the lines they share, a hint
 * as `hint:` when every failed machine has it, else `hint (node-0, node-1):`. A line too long for
 * the screen is wrapped under itself; the others are left exactly as they are.
 */
function errorDetails(recap: MachineRecap[], width: number): string[] {
  const details = new Map<string, string[]>();
  const hints = new Map<string, string[]>();
  const add = (m: Map<string, string[]>, text: string, machine: string) => text && m.set(text, [...(m.get(text) ?? []), machine]);
  const failed = recap.filter((r) => r.failure);
  for (const r of failed) {
    const rest = r.failure!.error.split('\n').slice(1);
    const at = rest.findIndex((l) => l.trimStart().startsWith('hint: '));
    const detail = at === -1 ? rest : rest.slice(0, at);
    add(details, dedent(detail).join('\n').trim() === '' ? '' : dedent(detail).join('\n'), r.machine);
    add(hints, at === -1 ? '' : dedent(rest.slice(at)).join('\n').replace(/^hint: /, ''), r.machine);
  }
  const fit = (line: string) => {
    const own = /^\s*/.exec(line)![0];
    return line.length > width ? wrap(line, width, own, `${own}  `) : [line];
  };
  const out: string[] = [];
  for (const [text, machines] of details) {
    const shown = text.split('\n').filter((l) => l.trim() !== '');
    // One line goes beside the machines' names; several under them.
    if (shown.length === 1) out.push(...fit(`  ${machines.join(', ')}: ${shown[0]!.trim()}`));
    else out.push(`  ${machines.join(', ')}:`, ...shown.map((l) => `    ${l}`).flatMap(fit));
  }
  for (const [text, machines] of hints) {
    const who = machines.length === failed.length ? 'hint: ' : `hint (${machines.join(', ')}): `;
    const [first, ...more] = text.split('\n');
    // Continued under its text, deeper than a machine's line (two spaces) so it is never taken for one.
    out.push(...wrap(`${who}${first}`, width, '', '      '), ...more.flatMap(fit));
  }
  return out;
}

/** Lines without the indent they all share. */
function dedent(lines: string[]): string[] {
  const shared = Math.min(...lines.filter((l) => l.trim() !== '').map((l) => /^\s*/.exec(l)![0].length));
  return lines.map((l) => l.slice(Number.isFinite(shared) ? shared : 0));
}

/**
 * Why steps were not run, each reason once: a step that failed stops the later ones (unless
 * --keep-going), machines that take turns stop at the first failure. That a machine's own failure
 * stops its later steps its own line already says.
 */
function notRunReasons(run: RunResult): string[] {
  const reasons = new Map<string, Set<string>>();
  for (const r of run.results) {
    if (r.status !== 'skipped' || !r.error || r.error.startsWith('not run: failed in step')) continue;
    const why = r.error.replace(/^not run: /, '');
    reasons.set(why, (reasons.get(why) ?? new Set()).add(r.step));
  }
  return [...reasons].map(([why, steps]) => `Not run: ${[...steps].join(', ')}: ${why}`);
}
