// A machine's facts with the cluster probes answered straight from the jumpbox: the API reads of
// the first control plane (where the probes would run kubectl) from its API server, etcd's health
// of a control plane from its member's /health. Everything else, and everything once an endpoint
// is given up, goes to the machine's own facts as before, in one batch.
import type { Facts, FactRequest, FileFact, ProbeResult } from '../engine/facts.ts';
import { factsFrom } from '../engine/facts.ts';
import type { Inventory, Machine } from '../inventory.ts';
import { apiReady, clusterObjects, clusterObjectsAgain, nodeListed, podsLabelled, rolloutDone } from '../probes/kubectl.ts';
import { etcdHealth } from '../probes/etcdctl.ts';
import { isProbeRequest, type ProbeAnswer, type ProbeRequest } from '../probes/probe.ts';
import { apiReadyAnswer, clusterObjectsAnswer, etcdHealthAnswer, nodeListedAnswer, podsLabelledAnswer, rolloutDoneAnswer, type Pace, SECOND } from './answers.ts';
import type { ClusterApi } from './cluster-api.ts';
import { NoAnswer, type HttpsEndpoint } from './https-endpoint.ts';

/** A probe answered directly: the endpoint asked (given up when it gives no answer), its health path, and the answer. */
interface DirectRoute {
  endpoint: HttpsEndpoint;
  health: string;
  answer(): Promise<ProbeAnswer>;
}

/** How a probe asked of `machine` is answered directly, if it is one of those and its endpoint is still in use. */
export function directRoute(req: ProbeRequest, api: ClusterApi, inv: Inventory, machine: Machine, pace: Pace = SECOND): DirectRoute | undefined {
  const a = req.args;
  if (req.of === etcdHealth) {
    if (machine.role !== 'control-plane') return undefined;
    const own = api.etcdMember(machine.ip);
    const members = a[0] === true ? inv.controlPlanes.map((m) => api.etcdMember(m.ip)) : [own];
    if (!own || members.some((m) => m === undefined)) return undefined;
    return { endpoint: own, health: '/health', answer: () => etcdHealthAnswer(members as HttpsEndpoint[]) };
  }
  // The API probes run kubectl on the first control plane: only its requests are answered from its API server.
  if (machine.hostname !== inv.controlPlanes[0]?.hostname) return undefined;
  const answer = ((): ((e: HttpsEndpoint) => Promise<ProbeAnswer>) | undefined => {
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

/** `inner` (a machine's facts) with the cluster probes answered directly through `api`; `log` gets one line per direct answer. */
export function directFacts(inner: Facts, api: ClusterApi, inv: Inventory, machine: Machine, log: (line: string) => void = () => {}, pace: Pace = SECOND): Facts {
  const routeOf = (r: FactRequest) => (isProbeRequest(r) ? directRoute(r, api, inv, machine, pace) : undefined);
  /** The answer of a route, or undefined when its endpoint gave none (then the machine is asked). */
  const tryRoute = async (req: ProbeRequest, route: DirectRoute): Promise<ProbeAnswer | undefined> => {
    try {
      const a = await route.answer();
      log(`probe ${req.probe} (exit ${a.code}): answered by ${route.endpoint.url} from this machine${a.stdout ? `\n--- stdout:\n${a.stdout.replace(/\n$/, '').slice(0, 4000)}` : ''}`);
      return a;
    } catch (e) {
      if (e instanceof NoAnswer) {
        api.noAnswer(route.endpoint, e);
        return undefined;
      }
      throw e;
    }
  };
  /** The machine answered what the endpoint did not: if it did answer, the jumpbox cannot reach the endpoint (confirmed once more). */
  const confirm = async (route: DirectRoute, answer: ProbeAnswer) => {
    if (answer.code === 0) await api.confirmUnreachable(route.endpoint, route.health);
  };

  const batch: Facts['batch'] = async (requests) => {
    const routes = requests.map(routeOf);
    const others = requests.flatMap((r, i) => (routes[i] ? [] : [i]));
    // The machine's own requests go out while the endpoints are asked.
    const [own, direct] = await Promise.all([
      inner.batch(others.map((i) => requests[i]!)),
      Promise.all(requests.map((r, i) => (routes[i] ? tryRoute(r as ProbeRequest, routes[i]!) : Promise.resolve(undefined)))),
    ]);
    const answers: Array<FileFact | ProbeResult | undefined> = requests.map(() => undefined);
    others.forEach((i, n) => (answers[i] = own[n]));
    direct.forEach((a, i) => a && (answers[i] = a));
    const unanswered = requests.flatMap((_, i) => (routes[i] && !direct[i] ? [i] : []));
    if (unanswered.length > 0) {
      const again = await inner.batch(unanswered.map((i) => requests[i]!));
      unanswered.forEach((i, n) => (answers[i] = again[n]));
      await Promise.all(unanswered.map((i) => confirm(routes[i]!, again[unanswered.indexOf(i)] as ProbeResult)));
    }
    return answers as Array<FileFact | ProbeResult>;
  };

  const wait: Facts['wait'] = async (req) => {
    const route = routeOf(req);
    const direct = route && (await tryRoute(req, route));
    if (direct) return req.parse(direct);
    if (!route) return inner.wait(req);
    // The endpoint gave no answer: wait the old way, then see whether the jumpbox reaches it now.
    let raw: ProbeAnswer | undefined;
    const parsed = await inner.wait({ ...req, parse: (a: ProbeAnswer) => ((raw = a), req.parse(a)) });
    if (raw) await confirm(route, raw);
    return parsed;
  };
  return factsFrom(batch, wait, inner.remember);
}
