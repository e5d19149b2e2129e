// drain-node (part of `hardway remove-node`): on the first control-plane machine, through the API
// with the admin kubeconfig as kubelet-rbac does: cordon the node, drain it (DaemonSet pods stay,
// emptyDir data goes, pods of a node that no longer answers are not waited for past a minute), then
// delete the Node. Planned only while the Node exists, so a rerun changes nothing.
import type { Change, ChangeStep, StepContext } from '../engine/types.ts';
import { FailureError } from '../errors.ts';
import { sh } from '../shell.ts';
import { localKubectl as kubectl } from '../probes/api.ts';
import { nodeListed } from '../probes/kubectl.ts';

/** Seconds drain waits for the node's pods to go; a pod marked deleted this long ago is not waited for. */
const DRAIN_TIMEOUT_S = 180;
const STUCK_POD_S = 60;

/** The step that takes the machines leaving the cluster (Inventory.leaving) out of its API; nothing to do when none leave. */
export const drainNodeStep: ChangeStep = {
  name: 'drain-node',
  title: 'Cordon and drain the leaving node, then delete its Node',
  targets: (inv) => (inv.leaving?.length ? inv.controlPlanes.slice(0, 1) : []),
  async plan(ctx: StepContext): Promise<Change[]> {
    const plans = await Promise.all((ctx.inventory.leaving ?? []).map((m) => drainPlan(ctx, m.hostname)));
    return plans.flat();
  },
};

/** Cordon, drain and delete node `name`, while the API lists it. */
async function drainPlan(ctx: StepContext, name: string): Promise<Change[]> {
  const { r } = await ctx.facts.ask({ r: nodeListed.ask(name) });
  if (!r.ok) {
    throw new FailureError(`${ctx.machine.hostname}: cannot ask the API for node ${name} (exit ${r.code}): ${r.error}`,
      'the API server must answer to drain a node: check "hardway verify", or rerun when it answers');
  }
  if (!r.listed) return [];
  const drain = sh`${kubectl(sh`cordon ${name}`)} && ${kubectl(sh`drain ${name} --ignore-daemonsets --delete-emptydir-data --force --timeout=${`${DRAIN_TIMEOUT_S}s`} --skip-wait-for-delete-timeout=${STUCK_POD_S}`)} && ${kubectl(sh`delete node ${name}`)}`;
  return [{ kind: 'exec', cmd: drain, timeoutMs: (DRAIN_TIMEOUT_S + 60) * 1000, reason: `node ${name} is in the cluster: cordon, move its pods off, delete the Node` }];
}
