// kubelet-rbac: once the API answers, the ClusterRole that lets the API server reach kubelets
// (logs, exec, port-forward, metrics) and its binding to user `kubernetes`, the API server's
// client identity. Applied with `kubectl apply` only when the objects differ, so reruns change nothing.
import { FailureError, PreconditionError } from '../errors.ts';
import { SERVER } from '../layout.ts';
import { sh, type Command } from '../shell.ts';
import type { Change, ChangeStep, StepContext } from '../engine/types.ts';
import { numberOption } from './options.ts';

/** The name of the ClusterRole and ClusterRoleBinding. */
export const RBAC_NAME = 'system:kube-apiserver-to-kubelet';

/** The manifest applied: a ClusterRole over the kubelet API and its binding to user kubernetes. */
export const RBAC_MANIFEST = `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: ${RBAC_NAME}
  annotations:
    rbac.authorization.kubernetes.io/autoupdate: "true"
  labels:
    kubernetes.io/bootstrapping: rbac-defaults
rules:
  - apiGroups: [""]
    resources: [nodes/proxy, nodes/stats, nodes/log, nodes/spec, nodes/metrics]
    verbs: ["*"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: ${RBAC_NAME}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: ${RBAC_NAME}
subjects:
  - apiGroup: rbac.authorization.k8s.io
    kind: User
    name: kubernetes
`;

const kubectl = (args: Command) => sh`kubectl --kubeconfig=${SERVER.adminKubeconfig} --request-timeout=5s ${args}`;

/** Waits up to `timeoutS` for the local API server's /readyz; prints the last error on failure. */
export function waitApi(timeoutS: number): Command {
  return sh`for i in $(seq ${timeoutS}); do out=$(${kubectl(sh`get --raw=/readyz`)} 2>&1) && exit 0; [ "$i" -lt ${timeoutS} ] && sleep 1; done; echo "$out" >&2; exit 1`;
}

/** The kubelet-rbac step (first control-plane machine only: the objects are cluster-wide). */
export const kubeletRbacStep: ChangeStep = {
  name: 'kubelet-rbac',
  title: 'Let the API server reach the kubelets (ClusterRole and binding for user kubernetes)',
  targets: (inv) => inv.controlPlanes.slice(0, 1),
  async plan(ctx: StepContext): Promise<Change[]> {
    const apply: Change = { kind: 'exec', cmd: kubectl(sh`apply -f -`), stdin: RBAC_MANIFEST, reason: `${RBAC_NAME} missing or different` };
    const state = (await ctx.facts.probe({ a: sh`systemctl is-active kube-apiserver 2>/dev/null; command -v kubectl >/dev/null || echo no-kubectl` })).a.stdout.trim();
    if (state !== 'active' && state !== 'activating') {
      if (ctx.options.dryRun) return [{ ...apply, reason: 'the API server is not running yet; applied once it answers' }];
      throw new PreconditionError(`the API server is not running on ${ctx.machine.hostname} (kube-apiserver: ${state.split('\n').join(', ') || 'not installed'})`,
        'run "hardway bootstrap-control-plane" first');
    }
    const timeoutS = ctx.options.dryRun ? 1 : numberOption(ctx.options, 'api-timeout');
    const up = await ctx.facts.query(waitApi(timeoutS));
    if (up.code !== 0) {
      if (ctx.options.dryRun) return [{ ...apply, reason: 'the API is not answering yet; applied once it does' }];
      throw new PreconditionError(
        `the API server at https://127.0.0.1:${ctx.inventory.settings.apiPort} did not answer within ${timeoutS}s: ${up.stderr.trim().split('\n').pop()}`,
        'check "journalctl -u kube-apiserver" on the control-plane machine; rerun when it answers',
      );
    }
    // `kubectl diff` exits 0 when the live objects equal the manifest, 1 when they differ.
    const diff = await ctx.facts.query(kubectl(sh`diff -f -`), { stdin: RBAC_MANIFEST });
    if (diff.code === 0) return [];
    if (diff.code !== 1) {
      throw new FailureError(`cannot compare ${RBAC_NAME} with the cluster: ${diff.stderr.trim()}`);
    }
    return [apply];
  },
};
