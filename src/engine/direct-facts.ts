// A machine's facts with the cluster probes answered straight from the jumpbox: the API reads of
// the first control plane (where the probes would run kubectl) from its API server, etcd's health
// of a control plane from its member's /health, doctor's lists (asked on the jumpbox) from the API
// server too. A direct answer is the probe's own typed value (answers.ts), so whoever asks gets one
// form whichever route answered. Everything else, and everything once an endpoint is given up,
// goes to the machine's own facts as before, in one batch.
import type { BatchAnswer, Facts, FactRequest, ProbeResult } from './facts.ts';
import { factsFrom } from './facts.ts';
import type { Inventory, Machine } from '../inventory.ts';
import { apiLists, apiReady, clusterObjects, clusterObjectsAgain, nodeListed, podsLabelled, rolloutDone } from '../probes/kubectl.ts';
import { etcdHealth } from '../probes/etcdctl.ts';
import { isProbeRequest, type ProbeRequest, type ReadAnswer } from '../probes/probe.ts';
import { apiListsAnswer, apiReadyAnswer, clusterObjectsAnswer, etcdHealthAnswer, nodeListedAnswer, podsLabelledAnswer, rolloutDoneAnswer, type Pace, SECOND } from '../cluster-api/answers.ts';
import type { ClusterApi } from '../cluster-api/cluster-api.ts';
import { NoAnswer, type HttpsEndpoint } from '../cluster-api/https-endpoint.ts';

/** Every typed answer of a probe with a direct route says whether the cluster answered (kubectl's exit 0 on the machine's route). */
type Answered = { ok: boolean };

/** A probe answered directly: the endpoint asked (given up when it gives no answer), its health path, and the answer. */
interface DirectRoute {
  endpoint: HttpsEndpoint;
  health: string;
  answer(): Promise<Answered>;
}

/** Where a probe is asked: a machine of the inventory, or the jumpbox itself (doctor's lists). */
export type AskedOn = Machine | 'jumpbox';

/** How a probe asked on `where` is answered directly, if it is one of those and its endpoint is still in use. */
export function directRoute(req: ProbeRequest, api: ClusterApi, inv: Inventory, where: AskedOn, pace: Pace = SECOND): DirectRoute | undefined {
  const a = req.args;
  if (where === 'jumpbox') {
    const endpoint = req.of === apiLists ? api.apiServer() : undefined;
    return endpoint ? { endpoint, health: '/readyz', answer: () => apiListsAnswer(endpoint) } : undefined;
  }
  if (req.of === etcdHealth) {
    if (where.role !== 'control-plane') return undefined;
    const own = api.etcdMember(where.ip);
    const members = a[0] === true ? inv.controlPlanes.map((m) => api.etcdMember(m.ip)) : [own];
    if (!own || members.some((m) => m === undefined)) return undefined;
    return { endpoint: own, health: '/health', answer: () => etcdHealthAnswer(members as HttpsEndpoint[]) };
  }
  // The API probes run kubectl on the first control plane: only its requests are answered from its API server.
  if (where.hostname !== inv.controlPlanes[0]?.hostname) return undefined;
  const answer = ((): ((e: HttpsEndpoint) => Promise<Answered>) | undefined => {
    if (req.of === clusterObjects) return (e) => clusterObjectsAnswer(e, a[0] as string[]);
    if (req.of === clusterObjectsAgain) return (e) => clusterObjectsAnswer(e, a[1] as string[]);
    if (req.of === nodeListed) return (e) => nodeListedAnswer(e, a[0] as string);
    if (req.of === podsLabelled) return (e) => podsLabelledAnswer(e, a[0] as string, a[1] as string);
    if (req.of === apiReady) return (e) => apiReadyAnswer(e, a[0] as number, pace);
    if (req.of === rolloutDone) return (e) => rolloutDoneAnswer(e, a[0] as number, a[1] as string, a[2] as string, pace);
    return undefined;
  })();
  const endpoint = answer && api.apiServer();
  return endpoint ? { endpoint, health: '/readyz', answer: () => answer!(endpoint) } : undefined;
}

/** The route's answer, or undefined when its endpoint gave none (told to the ClusterApi, which warns of a certificate, and to `unanswered`). */
async function tryRoute(req: ProbeRequest, route: DirectRoute, api: ClusterApi, log: (line: string) => void, unanswered?: (e: NoAnswer) => void): Promise<ReadAnswer<Answered> | undefined> {
  try {
    const read = await route.answer();
    log(`probe ${req.probe} (${read.ok ? 'ok' : 'not ok'}): answered by ${route.endpoint.url} from this machine\n--- answer:\n${JSON.stringify(read).slice(0, 4000)}`);
    return { read };
  } catch (e) {
    if (!(e instanceof NoAnswer)) throw e;
    api.noAnswer(route.endpoint, e);
    unanswered?.(e);
    return undefined;
  }
}

/**
 * A probe of the registry asked straight from the jumpbox, if it has a direct route there: its typed
 * answer; undefined when it has none or its endpoint gave no answer (`unanswered` is told why: then
 * ask it the old way).
 */
export async function answerDirectly<R>(req: ProbeRequest<R>, api: ClusterApi, inv: Inventory, where: AskedOn, log: (line: string) => void = () => {},
  unanswered?: (e: NoAnswer) => void): Promise<R | undefined> {
  const route = directRoute(req, api, inv, where);
  const answered = route && (await tryRoute(req, route, api, log, unanswered));
  return answered ? req.parse(answered as ReadAnswer<R>) : undefined;
}

/** `inner` (a machine's facts) with the cluster probes answered directly through `api`; `log` gets one line per direct answer. */
export function directFacts(inner: Facts, api: ClusterApi, inv: Inventory, machine: Machine, log: (line: string) => void = () => {}, pace: Pace = SECOND): Facts {
  const routeOf = (r: FactRequest) => (isProbeRequest(r) ? directRoute(r, api, inv, machine, pace) : undefined);
  /** The machine answered what the endpoint did not: if the cluster answered it, the jumpbox cannot reach the endpoint (confirmed once more). */
  const confirm = async (route: DirectRoute, answered: boolean) => {
    if (answered) await api.confirmUnreachable(route.endpoint, route.health);
  };

  const batch: Facts['batch'] = async (requests) => {
    const routes = requests.map(routeOf);
    const others = requests.flatMap((r, i) => (routes[i] ? [] : [i]));
    // The machine's own requests go out while the endpoints are asked.
    const [own, direct] = await Promise.all([
      inner.batch(others.map((i) => requests[i]!)),
      Promise.all(requests.map((r, i) => (routes[i] ? tryRoute(r as ProbeRequest, routes[i]!, api, log) : Promise.resolve(undefined)))),
    ]);
    const answers: Array<BatchAnswer | undefined> = requests.map(() => undefined);
    others.forEach((i, n) => (answers[i] = own[n]));
    direct.forEach((a, i) => a && (answers[i] = a));
    const unanswered = requests.flatMap((_, i) => (routes[i] && !direct[i] ? [i] : []));
    if (unanswered.length > 0) {
      const again = await inner.batch(unanswered.map((i) => requests[i]!));
      unanswered.forEach((i, n) => (answers[i] = again[n]));
      await Promise.all(unanswered.map((i, n) => confirm(routes[i]!, (again[n] as ProbeResult).code === 0)));
    }
    return answers as BatchAnswer[];
  };

  const wait: Facts['wait'] = async (req) => {
    const route = routeOf(req);
    const direct = route && (await tryRoute(req, route, api, log));
    if (direct) return req.parse(direct as ReadAnswer<never>);
    if (!route) return inner.wait(req);
    // The endpoint gave no answer: wait the old way, then see whether the jumpbox reaches it now.
    const parsed = await inner.wait(req);
    await confirm(route, (parsed as Answered).ok);
    return parsed;
  };
  return factsFrom(batch, wait, inner.remember);
}
