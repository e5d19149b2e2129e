// Drift: what a step's read-only plan would change on a machine, as a finding with the command that
// puts it back. A drift that the finding of another check already fixes (its fix runs that step on
// that machine) is told in that finding's evidence instead of standing beside it. Pure.
import type { StepName } from '../../steps/index.ts';
import { firstCommandText, fixRuns, stepsFix } from '../fixes.ts';
import { doctorCheck, type Found } from './check.ts';

/** The steps whose drift on a worker can leave its node NotReady or its pods unable to start. */
export const NODE_STEPS: ReadonlySet<StepName> = new Set(['pin-hosts', 'distribute', 'worker-os', 'containerd', 'images', 'cni', 'api-proxy', 'kubelet']);

/** At most this many changes are named in a drift's cause (all are in its evidence). */
const NAMED = 3;

/** A step whose plan cannot read the machine while the service of this check is down (the images step lists containerd's images). */
const NEEDS: Partial<Record<StepName, string>> = { images: 'containerd' };

/** One finding per step with planned changes on a machine, in `up`'s order. */
export const drift = doctorCheck({
  name: 'drift',
  rank: 90,
  looks: 'what each step of "hardway up", planned read-only, would change on each machine (a file, a binary, an image, a service, a route, a firewall rule, the cluster\'s own objects)',
  plans: (ctx, m, planned) => planned.map(({ step, changes }): Found => {
    const fix = stepsFix([step], m.hostname);
    // What differs first (files, then what commands would put right), bookkeeping of hardway's own last.
    const shown = [...changes].sort((a, b) => weight(a) - weight(b));
    const named = shown.slice(0, NAMED).map(whatDiffers);
    const more = changes.length > NAMED ? ` and ${changes.length - NAMED} more` : '';
    return {
      machine: m.hostname, fix, about: { step },
      cause: `${m.hostname} is not as hardway's ${step} step leaves it: ${named.join('; ')}${more}`,
      evidence: `${firstCommandText(fix, ctx.projectArgs)} --dry-run plans ${changes.length} change(s): ${changes.join('; ')}`,
    };
  }),
  // Any finding but a pod's (a pod is a symptom: it goes into the drift) whose fix runs the step on
  // that machine (a fix without --node runs everywhere); else one that says the service the plan reads there is down.
  explainedBy: (by, mine) => {
    const step = mine.about?.step;
    if (by.check === 'pods' || step === undefined) return false;
    return fixRuns(by.fix, step, mine.machine) ? 0 : by.machine === mine.machine && by.check === NEEDS[step] ? 1 : false;
  },
  note: (mine) => `plan of ${mine.about!.step}: ${mine.evidence.slice(mine.evidence.indexOf(' plans ') + 7)}`,
  // A drift can explain a NotReady node only when its step is one the node needs.
  explains: { node: (mine, theirs) => mine.machine === theirs.machine && NODE_STEPS.has(mine.about!.step!) },
});

/** Where a drift line goes in a cause: a file (0), a command (1), a note of a restart still due (2). */
function weight(line: string): number {
  if (line.startsWith('/')) return 0;
  return line.startsWith('remember that ') ? 2 : 1;
}

/** The start of a drift line: the path and why, or why a command would run. */
function whatDiffers(line: string): string {
  return line.replace(/ \(would run: .*\)$/, '');
}
