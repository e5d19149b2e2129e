// Direct answers to the probes that otherwise run kubectl or etcdctl on the control-plane machine,
// in the same shape as that program's output (exit code and stdout), so the plans and checks that
// parse them read one or the other alike. A NoAnswer (the endpoint is unreachable) propagates: the
// caller then asks the probe the old way.
import type { ProbeAnswer } from '../probes/probe.ts';
import { NODE_LIST_FROM } from '../probes/kubectl.ts';
import { jsonOf, NoAnswer, statusMessage, type HttpAnswer, type HttpsEndpoint } from './https-endpoint.ts';
import { collectionPath, kindOf, objectRef, withKind } from './resources.ts';

type Json = Record<string, unknown>;

/** kubectl's words for an HTTP error, on stdout as the probes that keep kubectl's error there read it. */
const failed = (a: HttpAnswer): ProbeAnswer => ({ code: 1, stdout: `Error from server: ${statusMessage(a)}\n` });

/** kubectl's pretty JSON: each document starts and ends with a brace alone on its line (objectItems splits on that). */
const printed = (o: unknown) => `${JSON.stringify(o, null, 4)}\n`;

/**
 * The cluster-objects probe: objects named TYPE/NAME, a missing one left out (--ignore-not-found);
 * NODE_LIST_FROM or more `nodes/NAME` as the list of every Node, as getObjectsCommand reads them.
 * One object answers as itself, several as a List, none as nothing.
 */
export async function clusterObjectsAnswer(api: HttpsEndpoint, resources: readonly string[]): Promise<ProbeAnswer> {
  const nodes = resources.filter((r) => r.startsWith('nodes/'));
  const listNodes = nodes.length >= NODE_LIST_FROM;
  const named = listNodes ? resources.filter((r) => !r.startsWith('nodes/')) : [...resources];
  const refs = named.map((r) => objectRef(r));
  const [answers, nodeList] = await Promise.all([
    Promise.all(refs.map((ref) => api.get(ref.path))),
    listNodes ? api.get(collectionPath(kindOf('nodes'))) : Promise.resolve(undefined),
  ]);
  const items: unknown[] = [];
  for (const a of answers) {
    if (a.status === 404) continue;
    if (a.status !== 200) return failed(a);
    items.push(jsonOf(a));
  }
  if (nodeList) {
    if (nodeList.status !== 200) return failed(nodeList);
    items.push(...withKind(kindOf('nodes'), (jsonOf<Json>(nodeList).items as Json[] | undefined) ?? []));
  }
  if (items.length === 0) return { code: 0, stdout: '' };
  return { code: 0, stdout: printed(items.length === 1 ? items[0] : { apiVersion: 'v1', kind: 'List', items, metadata: { resourceVersion: '' } }) };
}

/** The node-listed probe: `node/NAME` while the API lists it, nothing once it is gone. */
export async function nodeListedAnswer(api: HttpsEndpoint, name: string): Promise<ProbeAnswer> {
  const a = await api.get(objectRef(`nodes/${name}`).path);
  if (a.status === 404) return { code: 0, stdout: '' };
  return a.status === 200 ? { code: 0, stdout: `node/${name}\n` } : failed(a);
}

/** The pods-labelled probe: the pods of a namespace with a label, as `kubectl get pods -o json` lists them. */
export async function podsLabelledAnswer(api: HttpsEndpoint, namespace: string, label: string): Promise<ProbeAnswer> {
  const pods = kindOf('pods');
  const a = await api.get(`${collectionPath(pods, namespace)}?labelSelector=${encodeURIComponent(label)}`);
  if (a.status !== 200) return failed(a);
  const items = (jsonOf<Json>(a).items as Json[] | undefined) ?? [];
  return { code: 0, stdout: printed({ apiVersion: 'v1', kind: 'List', items: withKind(pods, items), metadata: { resourceVersion: '' } }) };
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
async function until(timeoutS: number, pace: Pace, once: () => Promise<{ done: boolean; said: string }>, first: { done: boolean; said: string }): Promise<ProbeAnswer> {
  const deadline = Date.now() + timeoutS * 1000;
  let last = first;
  while (!last.done && Date.now() + pace.everyMs <= deadline) {
    await pace.sleep(pace.everyMs);
    last = await once().catch((e: unknown) => {
      if (e instanceof NoAnswer) return { done: false, said: e.message };
      throw e;
    });
  }
  return { code: last.done ? 0 : 1, stdout: last.said ? `${last.said}\n` : '' };
}

/** The wait-api probe: GET /readyz until it says ok, up to `timeoutS`; the last answer when it gives up. */
export async function apiReadyAnswer(api: HttpsEndpoint, timeoutS: number, pace: Pace = SECOND): Promise<ProbeAnswer> {
  const once = async () => {
    const a = await api.get('/readyz');
    return a.status === 200 ? { done: true, said: '' } : { done: false, said: `Error from server: ${statusMessage(a)}` };
  };
  return until(timeoutS, pace, once, await once());
}

/** A Deployment as far as its rollout goes. */
interface RolloutState {
  metadata?: { generation?: number };
  spec?: { replicas?: number };
  status?: { observedGeneration?: number; replicas?: number; updatedReplicas?: number; availableReplicas?: number };
}

/** What `kubectl rollout status` says of a Deployment: done, or what it waits for (its own words). */
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

/** The wait-rollout probe: the Deployment read until it has rolled out, up to `timeoutS`; why not when it gives up. */
export async function rolloutDoneAnswer(api: HttpsEndpoint, timeoutS: number, deployment: string, namespace: string, pace: Pace = SECOND): Promise<ProbeAnswer> {
  const path = objectRef(`deployments/${deployment}`, namespace).path;
  const once = async () => {
    const a = await api.get(path);
    if (a.status !== 200) return { done: false, said: `Error from server: ${statusMessage(a)}` };
    return rolloutState(deployment, jsonOf<RolloutState>(a));
  };
  const answer = await until(timeoutS, pace, once, await once());
  return answer.code === 0 ? answer : { code: 1, stdout: `${answer.stdout}error: timed out waiting for the condition\n` };
}

/**
 * The etcd-health probe over the members' /health: one line per member as `etcdctl endpoint
 * health` prints it (`https://IP:2379 is healthy: ...`), exit 1 when one is not. A member that does
 * not answer is unhealthy, unless none answers (then the caller asks etcdctl on the machine).
 */
export async function etcdHealthAnswer(members: readonly HttpsEndpoint[]): Promise<ProbeAnswer> {
  const said = await Promise.all(members.map(async (m) => {
    const started = Date.now();
    try {
      const a = await m.get('/health');
      const health = a.status === 200 ? jsonOf<{ health?: string; reason?: string }>(a) : undefined;
      if (health?.health === 'true') return { ok: true, line: `${m.url} is healthy: successfully committed proposal: took = ${Date.now() - started}ms` };
      return { ok: false, line: `${m.url} is unhealthy: failed to commit proposal: ${health?.reason || statusMessage(a)}` };
    } catch (e) {
      if (!(e instanceof NoAnswer)) throw e;
      return { ok: false, line: `${m.url} is unhealthy: failed to commit proposal: ${e.message}`, none: e };
    }
  }));
  const none = said.find((s) => 'none' in s)?.none;
  if (none && said.every((s) => 'none' in s)) throw none;
  const ok = said.every((s) => s.ok);
  return { code: ok ? 0 : 1, stdout: said.map((s) => `${s.line}\n`).join('') + (ok ? '' : 'Error: unhealthy cluster\n') };
}
