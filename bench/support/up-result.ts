// Judging a `hardway up --keep-going --json` run on a lab with TEST STAND-INS for the Kubernetes
// server binaries: the stand-ins serve no API, so kubelet-rbac cannot apply its objects and verify
// cannot list nodes. Those two failures are by design; every other step on every machine must have
// converged (changed or unchanged) for the push to count as complete.

/** One step on one machine, and the whole --json summary: the engine's own types. */
export type { HostResult as StepResult, RunResult as UpSummary } from '../../src/engine/types.ts';
import type { HostResult as StepResult, RunResult as UpSummary } from '../../src/engine/types.ts';

/** Parses the one JSON object `hardway up --json` prints on stdout. */
export function parseSummary(stdout: string): UpSummary {
  const line = stdout.trim().split('\n').filter((l) => l.startsWith('{')).at(-1);
  if (!line) throw new Error(`no JSON summary on stdout:\n${stdout.slice(0, 2000)}`);
  return JSON.parse(line) as UpSummary;
}

/** True for the failures a stand-in API causes (and nothing else). */
function failsOnlyForNoApi(r: StepResult): boolean {
  if (r.status !== 'failed' || !r.error) return false;
  if (r.step === 'kubelet-rbac') return /did not answer/.test(r.error);
  if (r.step === 'verify') {
    const problems = r.error.split('\n').filter((l) => /^\s*- /.test(l));
    return problems.length > 0 && problems.every((p) => /the API does not answer/.test(p));
  }
  return false;
}

/** Results that keep the push from counting as complete (empty: complete). */
export function incomplete(s: UpSummary): StepResult[] {
  return s.results.filter((r) => r.status !== 'changed' && r.status !== 'unchanged' && !failsOnlyForNoApi(r));
}

/** One line naming each result that is not as it should be. */
export function describeResults(rs: StepResult[]): string {
  return rs.map((r) => `${r.step}@${r.machine} ${r.status}${r.error ? `: ${r.error.split('\n')[0]}` : ''}`).join('; ');
}
