// How doctor's findings read: for people (aligned, one block per finding, most likely first), and
// as the one JSON object scripts read.
import type { ApiEvidence, Finding } from './types.ts';

/** The `--json` object. */
export function doctorJson(findings: Finding[]): string {
  return JSON.stringify({ ok: findings.length === 0, findings });
}

/** The report for people: a summary line, then each finding with its evidence and fix. */
export function doctorText(findings: Finding[], summary: { machines: number; api: ApiEvidence; testImages: string[]; seconds: number }): string {
  const nodes = summary.api.error ? 'node states unknown' : summary.api.nodes.map((n) => `${n.name} ${n.ready === 'True' ? 'Ready' : 'NotReady'}`).join(', ') || 'no nodes';
  const pulls = summary.testImages.length ? `; test pull: ${summary.testImages.join(', ')}` : '';
  const head = `hardway doctor: ${summary.machines} machines; ${nodes}${pulls} (${summary.seconds.toFixed(1)} s)`;
  if (findings.length === 0) return `${head}\nNo problems found.`;
  const width = Math.max(...findings.map((f) => f.machine.length));
  const blocks = findings.map((f, i) => [
    `${String(i + 1).padStart(2)}. ${f.machine.padEnd(width)}  [${f.check}] ${f.cause}`,
    `    evidence: ${f.evidence}`,
    `    fix:      ${f.fix ?? '(no hardway command fixes this; see the cause)'}`,
  ].join('\n'));
  const n = findings.length;
  return [head, `${n} problem${n > 1 ? 's' : ''} found, most likely cause first:`, ...blocks].join('\n');
}
