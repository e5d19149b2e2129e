// kubelet-rbac: once the API answers, the ClusterRole that lets the API server reach kubelets
// (logs, exec, port-forward, metrics) and its binding to user `kubernetes`, the API server's
// client identity. Applied with `kubectl apply` only when the live objects lack a field of the
// manifest, so reruns change nothing; a rerun reads both with one kubectl in the facts batch.
import { FailureError, PreconditionError } from '../errors.ts';
import { SERVER } from '../layout.ts';
import { sh, type Command } from '../shell.ts';
import type { Change, ChangeStep, StepContext } from '../engine/types.ts';
import { numberOption } from './options.ts';
import { parseAllDocuments } from 'yaml';

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

/** kubectl on a control-plane machine with the admin kubeconfig, each request given 5 s. */
export const kubectl = (args: Command): Command => sh`kubectl --kubeconfig=${SERVER.adminKubeconfig} --request-timeout=5s ${args}`;

/** Waits up to `timeoutS` for the local API server's /readyz; prints the last error on failure. */
export function waitApi(timeoutS: number): Command {
  return sh`for i in $(seq ${timeoutS}); do out=$(${kubectl(sh`get --raw=/readyz`)} 2>&1) && exit 0; [ "$i" -lt ${timeoutS} ] && sleep 1; done; echo "$out" >&2; exit 1`;
}

/** The objects of RBAC_MANIFEST, as the API returns them (what a live object must contain). */
const WANTED = parseAllDocuments(RBAC_MANIFEST).map((d) => d.toJSON() as KubeObject);

/** Reads both objects in one kubectl (a missing one is left out, not an error). */
const getLive = kubectl(sh`get clusterrole/${RBAC_NAME} clusterrolebinding/${RBAC_NAME} -o json --ignore-not-found`);

/** The kubelet-rbac step (first control-plane machine only: the objects are cluster-wide). */
export const kubeletRbacStep: ChangeStep = {
  name: 'kubelet-rbac',
  title: 'Let the API server reach the kubelets (ClusterRole and binding for user kubernetes)',
  targets: (inv) => inv.controlPlanes.slice(0, 1),
  async plan(ctx: StepContext): Promise<Change[]> {
    const apply: Change = { kind: 'exec', cmd: kubectl(sh`apply -f -`), stdin: RBAC_MANIFEST, reason: `${RBAC_NAME} missing or different` };
    // The API server's state and, when it answers already (every rerun), both objects: one round trip.
    const first = await ctx.facts.probe({ state: sh`systemctl is-active kube-apiserver 2>/dev/null; command -v kubectl >/dev/null || echo no-kubectl`, live: getLive });
    const state = first.state.stdout.trim();
    if (state !== 'active' && state !== 'activating') {
      if (ctx.options.dryRun) return [{ ...apply, reason: 'the API server is not running yet; applied once it answers' }];
      throw new PreconditionError(`the API server is not running on ${ctx.machine.hostname} (kube-apiserver: ${state.split('\n').join(', ') || 'not installed'})`,
        'run "hardway bootstrap-control-plane" first');
    }
    let live = first.live;
    if (live.code !== 0) {
      // Just started: wait for /readyz, then read the objects again.
      const timeoutS = ctx.options.dryRun ? 1 : numberOption(ctx.options, 'api-timeout');
      const up = await ctx.facts.query(waitApi(timeoutS));
      if (up.code !== 0) {
        if (ctx.options.dryRun) return [{ ...apply, reason: 'the API is not answering yet; applied once it does' }];
        throw new PreconditionError(
          `the API server at https://127.0.0.1:${ctx.inventory.settings.apiPort} did not answer within ${timeoutS}s: ${up.stderr.trim().split('\n').pop()}`,
          'check "journalctl -u kube-apiserver" on the control-plane machine; rerun when it answers',
        );
      }
      const again = await ctx.facts.query(getLive);
      if (again.code !== 0) throw new FailureError(`cannot read ${RBAC_NAME} from the cluster: ${again.stderr.trim()}`);
      live = again;
    }
    return liveObjectsMatch(live.stdout) ? [] : [apply];
  },
};

interface KubeObject {
  kind?: string;
  metadata?: { name?: string };
  items?: KubeObject[];
}

/** Whether `kubectl get -o json` output holds both objects with every field the manifest sets, as `kubectl diff` would find no difference. */
export function liveObjectsMatch(json: string): boolean {
  const parsed = json.trim() ? (JSON.parse(json) as KubeObject) : { items: [] };
  const items = parsed.items ?? [parsed];
  return WANTED.every((want) => {
    const got = items.find((o) => o.kind === want.kind && o.metadata?.name === want.metadata?.name);
    return got !== undefined && contains(got, want);
  });
}

/** `got` holds every field of `want` (objects may have more keys; lists must match item by item). */
function contains(got: unknown, want: unknown): boolean {
  if (Array.isArray(want)) return Array.isArray(got) && got.length === want.length && want.every((w, i) => contains(got[i], w));
  if (want !== null && typeof want === 'object') {
    if (got === null || typeof got !== 'object' || Array.isArray(got)) return false;
    return Object.entries(want).every(([k, v]) => contains((got as Record<string, unknown>)[k], v));
  }
  return got === want;
}
