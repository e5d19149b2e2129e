// kubelet-rbac: once the API answers, the ClusterRole that lets the API server reach kubelets
// (logs, exec, port-forward, metrics) and its binding to user `kubernetes`, the API server's
// client identity. Applied (server-side from the jumpbox, else `kubectl apply`) only when the live objects lack a field of the
// manifest, so reruns change nothing; a rerun reads both with one kubectl in the facts batch.
import { sh } from '../shell.ts';
import { localKubectl } from '../probes/api.ts';
import type { Change, ChangeStep, StepContext } from '../engine/types.ts';
import { findObject, objectItems, type KubeObject } from '../probes/kubectl.ts';
import { holdsFields, readLiveObjects } from './support/cluster-objects.ts';
import { parseAllDocuments } from 'yaml';
import { applyManifest } from '../cluster-api/writes.ts';

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

const kubectl = localKubectl;

/** The objects of RBAC_MANIFEST, as the API returns them (what a live object must contain). */
const WANTED = parseAllDocuments(RBAC_MANIFEST).map((d) => d.toJSON() as KubeObject);

/** Both objects, read in one kubectl (a missing one is left out, not an error). */
const LIVE = [`clusterrole/${RBAC_NAME}`, `clusterrolebinding/${RBAC_NAME}`];

/** The kubelet-rbac step (first control-plane machine only: the objects are cluster-wide). */
export const kubeletRbacStep: ChangeStep = {
  name: 'kubelet-rbac',
  title: 'Let the API server reach the kubelets (ClusterRole and binding for user kubernetes)',
  targets: (inv) => inv.controlPlanes.slice(0, 1),
  async plan(ctx: StepContext): Promise<Change[]> {
    // A server-side apply from the jumpbox when its API answers there, else kubectl apply on the machine.
    const apply: Change = { kind: 'exec', cmd: kubectl(sh`apply -f -`), stdin: RBAC_MANIFEST, api: applyManifest(RBAC_MANIFEST), reason: `${RBAC_NAME} missing or different` };
    const live = await readLiveObjects<KubeObject>(ctx, LIVE, 'hardway bootstrap-control-plane');
    if ('notYet' in live) return [{ ...apply, reason: live.notYet }];
    return matches(live.items) ? [] : [apply];
  },
};

/** Whether `kubectl get -o json` output holds both objects with every field the manifest sets, as `kubectl diff` would find no difference. */
export function liveObjectsMatch(json: string): boolean {
  return matches(objectItems<KubeObject>(json));
}

function matches(items: KubeObject[]): boolean {
  return WANTED.every((want) => holdsFields(findObject(items, want.kind!, want.metadata!.name!), want));
}
