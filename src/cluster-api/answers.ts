// Direct answers to the probes that otherwise run kubectl or etcdctl on a machine: the probe's own
// typed answer (src/probes/kubectl.ts, etcdctl.ts), read once from the API server's or the etcd
// members' JSON, so the plans and checks that ask them get one value whichever route answered. A
// NoAnswer (the endpoint is unreachable) propagates: the caller then asks the probe the old way.
import type { ApiFailure, KubeObject, NodeListed, ObjectsRead, WaitEnd } from '../probes/kubectl.ts';
import { NODE_LIST_FROM } from '../probes/kubectl.ts';
import type { EtcdHealth, MemberHealth } from '../probes/etcdctl.ts';
import { jsonOf, NoAnswer, statusMessage, type HttpAnswer, type HttpsEndpoint } from './https-endpoint.ts';
import { collectionPath, kindOf, objectRef, withKind, type KindInfo } from './resources.ts';

/** An HTTP error as a failed read: exit 1, as kubectl exits on the API's refusal, with the API's words. */
const failed = (a: HttpAnswer): ApiFailure => ({ ok: false, code: 1, error: statusMessage(a) });

/** The items of a list answer, each with its kind (the API leaves it out of a list's items). */
const itemsOf = (k: KindInfo, a: HttpAnswer): KubeObject[] => withKind(k, jsonOf<{ items?: KubeObject[] }>(a).items ?? []);

/**
 * The cluster-objects probe: objects named TYPE/NAME, a missing one left out (--ignore-not-found);
 * NODE_LIST_FROM or more `nodes/NAME` as the list of every Node, as getObjectsCommand reads them.
 */
export async function clusterObjectsAnswer(api: HttpsEndpoint, resources: readonly string[]): Promise<ObjectsRead> {
  const nodes = resources.filter((r) => r.startsWith('nodes/'));
  const listNodes = nodes.length >= NODE_LIST_FROM;
  const named = listNodes ? resources.filter((r) => !r.startsWith('nodes/')) : [...resources];
  const refs = named.map((r) => objectRef(r));
  const [answers, nodeList] = await Promise.all([
    Promise.all(refs.map((ref) => api.get(ref.path))),
    listNodes ? api.get(collectionPath(kindOf('nodes'))) : Promise.resolve(undefined),
  ]);
  const items: KubeObject[] = [];
  for (const a of answers) {
    if (a.status === 404) continue;
    if (a.status !== 200) return failed(a);
    items.push(jsonOf<KubeObject>(a));
  }
  if (nodeList) {
    if (nodeList.status !== 200) return failed(nodeList);
    items.push(...itemsOf(kindOf('nodes'), nodeList));
  }
  return { ok: true, items };
}

/** The node-listed probe: whether the API lists the Node. */
export async function nodeListedAnswer(api: HttpsEndpoint, name: string): Promise<NodeListed> {
  const a = await api.get(objectRef(`nodes/${name}`).path);
  if (a.status === 404) return { ok: true, listed: false };
  return a.status === 200 ? { ok: true, listed: true } : failed(a);
}

/** The pods-labelled probe: the pods of a namespace with a label. */
export async function podsLabelledAnswer(api: HttpsEndpoint, namespace: string, label: string): Promise<ObjectsRead> {
  const pods = kindOf('pods');
  const a = await api.get(`${collectionPath(pods, namespace)}?labelSelector=${encodeURIComponent(label)}`);
  return a.status === 200 ? { ok: true, items: itemsOf(pods, a) } : failed(a);
}

/** The kinds doctor lists, in the order its kubectl names them. */
export const DOCTOR_KINDS = ['nodes', 'pods', 'deployments', 'events'] as const;

/** The api-lists probe (doctor's): every Node, Pod, Deployment and Event, each with its kind; an HTTP error names the list refused. */
export async function apiListsAnswer(api: HttpsEndpoint): Promise<ObjectsRead> {
  const lists = await Promise.all(DOCTOR_KINDS.map(async (k) => ({ kind: kindOf(k), a: await api.get(collectionPath(kindOf(k))) })));
  const refused = lists.find((l) => l.a.status !== 200);
  if (refused) return { ok: false, code: 1, error: `${collectionPath(refused.kind)}: ${statusMessage(refused.a)}` };
  return { ok: true, items: lists.flatMap((l) => itemsOf(l.kind, l.a)) };
}

/** How often a direct wait asks again, and the sleep it is given (tests pass a fast one). */
export interface Pace {
  everyMs: number;
  sleep(ms: number): Promise<void>;
}

/** Once a second, as the shell waits do. */
export const SECOND: Pace = { everyMs: 1000, sleep: (ms) => new Promise((r) => setTimeout(r, ms)) };

/**
 * Asks `once` until it answers done or `timeoutS` passes; a NoAnswer meanwhile (a server
 * restarting) is one more try. The first ask is made before this is called, so a NoAnswer there
 * (the endpoint unreachable from the jumpbox) goes to the caller instead.
 */
async function until(timeoutS: number, pace: Pace, once: () => Promise<{ done: boolean; said: string }>, first: { done: boolean; said: string }): Promise<WaitEnd> {
  const deadline = Date.now() + timeoutS * 1000;
  let last = first;
  while (!last.done && Date.now() + pace.everyMs <= deadline) {
    await pace.sleep(pace.everyMs);
    last = await once().catch((e: unknown) => {
      if (e instanceof NoAnswer) return { done: false, said: e.message };
      throw e;
    });
  }
  return { ok: last.done, said: last.said };
}

/** The wait-api probe: GET /readyz until it says ok, up to `timeoutS`; the last answer when it gives up. */
export async function apiReadyAnswer(api: HttpsEndpoint, timeoutS: number, pace: Pace = SECOND): Promise<WaitEnd> {
  const once = async () => {
    const a = await api.get('/readyz');
    return a.status === 200 ? { done: true, said: '' } : { done: false, said: statusMessage(a) };
  };
  return until(timeoutS, pace, once, await once());
}

/** A Deployment as far as its rollout goes. */
interface RolloutState {
  metadata?: { generation?: number };
  spec?: { replicas?: number };
  status?: { observedGeneration?: number; replicas?: number; updatedReplicas?: number; availableReplicas?: number };
}

/** Whether a Deployment has rolled out (as `kubectl rollout status` judges it), and what it still waits for. */
export function rolloutState(name: string, d: RolloutState): { done: boolean; said: string } {
  const want = d.spec?.replicas ?? 1;
  const s = d.status ?? {};
  const updated = s.updatedReplicas ?? 0;
  if ((d.metadata?.generation ?? 0) > (s.observedGeneration ?? 0)) return { done: false, said: 'Waiting for deployment spec update to be observed...' };
  if (updated < want) return { done: false, said: `Waiting for deployment "${name}" rollout to finish: ${updated} out of ${want} new replicas have been updated...` };
  if ((s.replicas ?? 0) > updated) return { done: false, said: `Waiting for deployment "${name}" rollout to finish: ${(s.replicas ?? 0) - updated} old replicas are pending termination...` };
  if ((s.availableReplicas ?? 0) < updated) return { done: false, said: `Waiting for deployment "${name}" rollout to finish: ${s.availableReplicas ?? 0} of ${updated} updated replicas are available...` };
  return { done: true, said: `deployment "${name}" successfully rolled out` };
}

/** The wait-rollout probe: the Deployment read until it has rolled out, up to `timeoutS`; what it still waited for when it gives up. */
export async function rolloutDoneAnswer(api: HttpsEndpoint, timeoutS: number, deployment: string, namespace: string, pace: Pace = SECOND): Promise<WaitEnd> {
  const path = objectRef(`deployments/${deployment}`, namespace).path;
  const once = async () => {
    const a = await api.get(path);
    if (a.status !== 200) return { done: false, said: statusMessage(a) };
    return rolloutState(deployment, jsonOf<RolloutState>(a));
  };
  const end = await until(timeoutS, pace, once, await once());
  return end.ok ? end : { ok: false, said: `timed out after ${timeoutS}s: ${end.said}` };
}

/**
 * The etcd-health probe over the members' /health: each member healthy or not (with etcd's reason,
 * or why it did not answer). A member that does not answer is unhealthy, unless none answers (then
 * the caller asks etcdctl on the machine).
 */
export async function etcdHealthAnswer(members: readonly HttpsEndpoint[]): Promise<EtcdHealth> {
  const said = await Promise.all(members.map(async (m): Promise<MemberHealth & { none?: NoAnswer }> => {
    try {
      const a = await m.get('/health');
      const health = a.status === 200 ? jsonOf<{ health?: string; reason?: string }>(a) : undefined;
      if (health?.health === 'true') return { url: m.url, healthy: true };
      return { url: m.url, healthy: false, why: health?.reason || statusMessage(a) };
    } catch (e) {
      if (!(e instanceof NoAnswer)) throw e;
      return { url: m.url, healthy: false, why: e.message, none: e };
    }
  }));
  const none = said.find((s) => s.none)?.none;
  if (none && said.every((s) => s.none)) throw none;
  return { ok: said.every((s) => s.healthy), members: said.map(({ none: _none, ...member }) => member) };
}
