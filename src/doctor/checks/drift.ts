// Drift: what a step's read-only plan would change on a machine, as a finding with the command that
// puts it back. A drift the finding of another check already fixes (its command runs that step on
// that machine) adds its plan to that finding's evidence instead of standing beside it. Pure.
import type { Machine } from '../../inventory.ts';
import type { StepName } from '../../steps/index.ts';
import { fixRuns, stepsFix } from '../fixes.ts';
import type { Check, DoctorContext, Finding, MachineEvidence } from '../types.ts';

/** The steps whose drift on a worker can leave its node NotReady or its pods unable to start. */
export const NODE_STEPS: ReadonlySet<StepName> = new Set(['pin-hosts', 'distribute', 'worker-os', 'containerd', 'images', 'cni', 'api-proxy', 'kubelet']);

/** A drift finding with the step it is about. */
export interface DriftFinding {
  finding: Finding;
  step: StepName;
}

/** At most this many changes are named in a drift's cause (all are in its evidence). */
const NAMED = 3;

/** One finding per step with planned changes on `m`, in `up`'s order. */
export function driftFindings(ctx: DoctorContext, m: Machine, ev: MachineEvidence): DriftFinding[] {
  return (ev.drift ?? []).map(({ step, changes }) => {
    const fix = stepsFix(ctx, [step], m.hostname);
    // What differs first (files, then what commands would put right), bookkeeping of hardway's own last.
    const shown = [...changes].sort((a, b) => weight(a) - weight(b));
    const named = shown.slice(0, NAMED).map(whatDiffers);
    const more = changes.length > NAMED ? ` and ${changes.length - NAMED} more` : '';
    return {
      step,
      finding: {
        machine: m.hostname, check: 'drift', fix,
        cause: `${m.hostname} is not as hardway's ${step} step leaves it: ${named.join('; ')}${more}`,
        evidence: `${fix.split(' && ')[0]} --dry-run plans ${changes.length} change(s): ${changes.join('; ')}`,
      },
    };
  });
}

/** Where a drift line goes in a cause: a file (0), a command (1), a note of a restart still due (2). */
function weight(line: string): number {
  if (line.startsWith('/')) return 0;
  return line.startsWith('remember that ') ? 2 : 1;
}

/** The start of a drift line: the path and why, or why a command would run. */
function whatDiffers(line: string): string {
  return line.replace(/ \(would run: .*\)$/, '');
}

/** A step whose plan cannot read the machine while the service of this check is down (the images step lists containerd's images). */
const NEEDS: Partial<Record<StepName, Check>> = { images: 'containerd' };

/**
 * Drift findings that no other finding already fixes; the rest are told in the evidence of the
 * first finding whose fix runs their step on their machine (or that says the service their plan
 * reads there is down).
 */
export function unexplainedDrift(drift: DriftFinding[], others: Finding[]): DriftFinding[] {
  return drift.filter(({ finding, step }) => {
    const by = others.find((f) => fixRuns(f.fix, step, finding.machine)) ?? others.find((f) => f.machine === finding.machine && f.check === NEEDS[step]);
    if (!by) return true;
    by.evidence += `; plan of ${step}: ${finding.evidence.slice(finding.evidence.indexOf(' plans ') + 7)}`;
    return false;
  });
}
