// Where the objects hardway reads and writes live in the API: TYPE/NAME as the steps name them
// (what kubectl takes) to the REST path of the object and of its kind's collection. Only the kinds
// the steps and checks use (kubelet-rbac, dns, verify, drain-node, doctor); another is a bug.
import { OBJECTS_NAMESPACE } from '../probes/kubectl.ts';

/** A kind the API serves: its group/version, plural, and whether its objects live in a namespace. */
export interface KindInfo {
  kind: string;
  apiVersion: string;
  plural: string;
  namespaced: boolean;
}

const KINDS: readonly KindInfo[] = [
  { kind: 'Node', apiVersion: 'v1', plural: 'nodes', namespaced: false },
  { kind: 'Pod', apiVersion: 'v1', plural: 'pods', namespaced: true },
  { kind: 'Service', apiVersion: 'v1', plural: 'services', namespaced: true },
  { kind: 'Endpoints', apiVersion: 'v1', plural: 'endpoints', namespaced: true },
  { kind: 'ConfigMap', apiVersion: 'v1', plural: 'configmaps', namespaced: true },
  { kind: 'ServiceAccount', apiVersion: 'v1', plural: 'serviceaccounts', namespaced: true },
  { kind: 'Event', apiVersion: 'v1', plural: 'events', namespaced: true },
  { kind: 'Deployment', apiVersion: 'apps/v1', plural: 'deployments', namespaced: true },
  { kind: 'ClusterRole', apiVersion: 'rbac.authorization.k8s.io/v1', plural: 'clusterroles', namespaced: false },
  { kind: 'ClusterRoleBinding', apiVersion: 'rbac.authorization.k8s.io/v1', plural: 'clusterrolebindings', namespaced: false },
];

/** The kind a TYPE of kubectl names (singular, plural or the Kind itself, any case). */
export function kindOf(type: string): KindInfo {
  const t = type.toLowerCase();
  const k = KINDS.find((x) => x.kind.toLowerCase() === t || x.plural === t || x.plural === `${t}s` || (t === 'endpoint' && x.plural === 'endpoints'));
  if (!k) throw new Error(`no API path for kind "${type}" (src/cluster-api/resources.ts knows ${KINDS.map((x) => x.plural).join(', ')})`);
  return k;
}

/** The collection path of a kind: /api/v1/nodes, /apis/apps/v1/namespaces/NS/deployments; every namespace when `namespace` is undefined. */
export function collectionPath(k: KindInfo, namespace?: string): string {
  const base = k.apiVersion.includes('/') ? `/apis/${k.apiVersion}` : `/api/${k.apiVersion}`;
  return k.namespaced && namespace !== undefined ? `${base}/namespaces/${encodeURIComponent(namespace)}/${k.plural}` : `${base}/${k.plural}`;
}

/** One named object: its kind and REST path (namespaced kinds in `namespace`, kube-system unless told). */
export interface ObjectRef {
  resource: string;
  kind: KindInfo;
  name: string;
  path: string;
}

/** The object TYPE/NAME names (as the cluster-objects probe and kubectl take it). */
export function objectRef(resource: string, namespace = OBJECTS_NAMESPACE): ObjectRef {
  const slash = resource.indexOf('/');
  if (slash <= 0 || slash === resource.length - 1) throw new Error(`not a TYPE/NAME: ${JSON.stringify(resource)}`);
  const kind = kindOf(resource.slice(0, slash));
  const name = resource.slice(slash + 1);
  return { resource, kind, name, path: `${collectionPath(kind, namespace)}/${encodeURIComponent(name)}` };
}

/** A list answer's items with their kind and apiVersion, as kubectl prints them (the API leaves them out of a list's items). */
export function withKind<T extends object>(k: KindInfo, items: readonly T[]): Array<T & { kind: string; apiVersion: string }> {
  return items.map((o) => ({ apiVersion: k.apiVersion, kind: k.kind, ...o }));
}
