// The cluster as the API tells it: the API itself not answering from the jumpbox, and each worker
// the API lists as NotReady, or does not list. A node's state goes into the evidence of the finding
// that explains it (the checks that declare they explain `node`), or is a finding of its own. Pure.
import type { NodeState } from '../types.ts';
import { doctorCheck, type Found } from './check.ts';

/** The API server does not answer from this jumpbox: no node's state is known. */
export const api = doctorCheck({
  name: 'api',
  rank: 30,
  looks: 'the API server answers from this jumpbox (kubectl with pki/jumpbox.kubeconfig)',
  apiDown: (ctx, evidence): Found[] => {
    const cp = ctx.inventory.controlPlanes[0]!;
    return [{ machine: cp.hostname, cause: `the API server on ${cp.hostname} does not answer from this jumpbox, so no node's state is known`, evidence: `${evidence.command}: ${evidence.error}`, fix: null }];
  },
});

/** A worker the API lists as NotReady, or does not list, with no cause found on its machine. */
export const node = doctorCheck({
  name: 'node',
  rank: 190,
  looks: 'each worker is registered with the API and Ready (when no cause found on its machine explains why not)',
  api: (ctx, evidence) => ctx.inventory.workers.flatMap((w): Found[] => {
    const listed = evidence.nodes.find((n) => n.name === w.hostname);
    if (listed?.ready === 'True') return [];
    const state = listed ? `${w.hostname} ${describeNode(listed)}` : `${w.hostname} is not registered`;
    const cause = listed
      ? `node ${w.hostname} is NotReady and doctor found no cause on the machine (a kubelet just restarted takes up to a minute)`
      : `node ${w.hostname} is not registered with the API and doctor found no cause on the machine`;
    return [{ machine: w.hostname, cause, evidence: `${evidence.command}: ${state}`, fix: null, about: { state } }];
  }),
  note: (mine) => `kubectl get nodes: ${mine.about!.state}`,
});

/** `Ready=False (KubeletNotReady: ...)` as kubectl would say it. */
function describeNode(n: NodeState): string {
  const why = [n.reason, n.message].filter(Boolean).join(': ');
  return `Ready=${n.ready || 'none'}${why ? ` (${why})` : ''}`;
}
