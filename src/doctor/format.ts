// How doctor's findings read: for people (aligned, one block per finding, most likely first), and
// as the one JSON object scripts read.
import { wrap } from '../ui/wrap.ts';
import type { ApiEvidence, Finding } from './types.ts';

/** The `--json` object. */
export function doctorJson(findings: Finding[]): string {
  return JSON.stringify({ ok: findings.length === 0, findings });
}

/** The report for people: a summary line, then each finding with its evidence and fix, wrapped to `width` (the terminal's; the bundle's copy is not wrapped). */
export function doctorText(findings: Finding[], summary: { machines: number; api: ApiEvidence; testImages: string[]; seconds: number }, width = Infinity): string {
  const nodes = summary.api.error ? 'node states unknown' : summary.api.nodes.map((n) => `${n.name} ${n.ready === 'True' ? 'Ready' : 'NotReady'}`).join(', ') || 'no nodes';
  const pulls = summary.testImages.length ? `; test pull: ${summary.testImages.join(', ')}` : '';
  // Not wrapped at all without a width (the bundle's copy): the text exactly as found.
  const fit = (text: string, first: string, rest: string) => (width === Infinity ? [first + text] : wrap(text, width, first, rest));
  const head = fit(`hardway doctor: ${summary.machines} machines; ${nodes}${pulls} (${summary.seconds.toFixed(1)} s)`, '', '  ');
  if (findings.length === 0) return [...head, 'No problems found.'].join('\n');
  const names = Math.max(...findings.map((f) => f.machine.length));
  // Each part wrapped under its own text, so the labels stay a column of their own.
  const hang = ' '.repeat(14);
  const blocks = findings.map((f, i) => {
    const lead = `${String(i + 1).padStart(2)}. ${f.machine.padEnd(names)}  `;
    return [
      ...fit(`[${f.check}] ${f.cause}`, lead, ' '.repeat(lead.length)),
      ...fit(f.evidence, '    evidence: ', hang),
      ...fit(f.fix ?? '(no hardway command fixes this; see the cause)', '    fix:      ', hang),
    ].join('\n');
  });
  const n = findings.length;
  return [...head, `${n} problem${n > 1 ? 's' : ''} found, most likely cause first:`, ...blocks].join('\n');
}
