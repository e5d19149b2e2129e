// Judging a `hardway up --keep-going --json` run: every step on every machine must have converged
// (changed or unchanged), verify included (API answers, nodes Ready), for the push to count as complete.

/** One step on one machine, and the whole --json summary: the engine's own types. */
export type { HostResult as StepResult, RunResult as UpSummary } from '../../src/engine/types.ts';
import type { HostResult as StepResult, RunResult as UpSummary } from '../../src/engine/types.ts';

/** Parses the one JSON object `hardway up --json` prints on stdout. */
export function parseSummary(stdout: string): UpSummary {
  const line = stdout.trim().split('\n').filter((l) => l.startsWith('{')).at(-1);
  if (!line) throw new Error(`no JSON summary on stdout:\n${stdout.slice(0, 2000)}`);
  return JSON.parse(line) as UpSummary;
}

/** Results that keep the push from counting as complete (empty: complete). */
export function incomplete(s: UpSummary): StepResult[] {
  return s.results.filter((r) => r.status !== 'changed' && r.status !== 'unchanged');
}

/** One line naming each result that is not as it should be. */
export function describeResults(rs: StepResult[]): string {
  return rs.map((r) => `${r.step}@${r.machine} ${r.status}${r.error ? `: ${r.error.split('\n')[0]}` : ''}`).join('; ');
}
