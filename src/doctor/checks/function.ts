// What works, asked from every worker, not only what runs: a pod on another node answers, the API
// Service answers through kube-proxy, the cluster DNS answers the API's name. Units can be active,
// pods Ready and files equal while these fail. Each is a symptom: a cause any other check finds
// comes first and takes it into its evidence; alone, it says what failed and where to look next.
import type { Machine } from '../../inventory.ts';
import { dnsLookup, rcodeName, tcpReach, type AskedDns, type AskedFrom, type AskedReach, type TcpReach } from '../../probes/function.ts';
import { doctorCheck, type Found, type Judged } from './check.ts';

/** The port every CoreDNS pod answers on, over TCP too. */
const DNS_PORT = 53;

/**
 * Whether a failure says only that the question could not be asked from here: a machine without a
 * pod asks from its own network, and one without a default route has no route to the Service range
 * (a pod has one, through its node).
 */
const notAskable = (from: AskedFrom, why: string | undefined) => from === 'host' && /network is unreachable/i.test(why ?? '');

/** Where a question was asked from, as evidence says it. */
const fromWhere = (m: Machine, from: AskedFrom) => (from === 'host' ? m.hostname : `a pod's network on ${m.hostname} (${from})`);

/** Symptoms of their own, which explain none of this module's: a failed test pull, a pod that does not start, and these checks. */
const SYMPTOMS: ReadonlySet<string> = new Set(['registry', 'pull', 'pods', 'pod-network', 'api-service', 'cluster-dns']);

// A finding of any other check is a cause, and comes first with this symptom in its evidence.
const explainedByACause = (by: Judged) => !SYMPTOMS.has(by.check);

/** A pod on another node, reached from each worker: a CoreDNS pod's DNS port over TCP. */
export const podNetwork = doctorCheck({
  name: 'pod-network',
  rank: 183,
  looks: 'from each worker, a CoreDNS pod on another node answers a TCP connect',
  later: true,
  asks: ({ machine, dnsPods }) => {
    const elsewhere = dnsPods.filter((p) => p.node !== machine.hostname);
    return machine.role !== 'worker' || elsewhere.length === 0 ? {} : { 'pod reach': tcpReach.ask(elsewhere.map((p) => `${p.ip}:${DNS_PORT}`)) };
  },
  judge: ({ ctx, machine, answers }) => {
    const reached = answers['pod reach'] as AskedReach | undefined;
    if (!reached) return [];
    return reached.results.filter((r: TcpReach) => !r.ok && !notAskable(reached.from, r.why)).map((r): Found => {
      const pod = (ctx.dnsPods ?? []).find((p) => `${p.ip}:${DNS_PORT}` === r.target);
      const node = pod?.node ?? r.target;
      return {
        machine: pod?.node ?? machine.hostname,
        cause: `pods on ${node} do not answer from ${machine.hostname}: pod traffic between them is lost while both nodes stay Ready; ` +
          `look next at what ${node} does with forwarded packets (iptables -S FORWARD there: a policy of DROP, a rule that drops ${ctx.inventory.settings.clusterCidr}) and at its pod routes`,
        evidence: `TCP connect from ${fromWhere(machine, reached.from)} to CoreDNS pod ${pod?.name ?? '?'} at ${r.target}: ${r.why ?? 'failed'}`,
        fix: null,
      };
    });
  },
  explainedBy: explainedByACause,
});

/** The API's Service address (the first of the service range), reached from each worker through kube-proxy's rules. */
export const apiService = doctorCheck({
  name: 'api-service',
  rank: 185,
  looks: "from each worker, the API's Service address answers through kube-proxy",
  asks: ({ inventory, machine }) => (machine.role === 'worker' ? { 'api service': tcpReach.ask([`${inventory.serviceIp}:443`]) } : {}),
  judge: ({ machine, answers }) => {
    const asked = answers['api service'] as AskedReach | undefined;
    const failed = asked?.results.find((r) => !r.ok && !notAskable(asked.from, r.why));
    return asked && failed ? [{
      machine: machine.hostname,
      cause: `the API's Service address ${failed.target} does not answer on ${machine.hostname}: pods there cannot reach the API server (kube-proxy's rules on ${machine.hostname} send it there); ` +
        `look next at kube-proxy there (journalctl -u kube-proxy) and whether the API server answers on its own address`,
      evidence: `TCP connect from ${fromWhere(machine, asked.from)} to ${failed.target}: ${failed.why ?? 'failed'}`,
      fix: null,
    }] : [];
  },
  explainedBy: explainedByACause,
});

/** A query for the API's Service name, sent from each worker to the cluster DNS Service address. */
export const clusterDns = doctorCheck({
  name: 'cluster-dns',
  rank: 187,
  looks: "from each worker, the cluster DNS answers kubernetes.default.svc.<domain> with the API's Service address",
  asks: ({ inventory, machine }) => (machine.role === 'worker' && inventory.settings.dns.enabled
    ? { 'cluster dns': dnsLookup.ask(inventory.clusterDnsIp, apiServiceName(inventory.settings.clusterDomain)) } : {}),
  judge: ({ ctx, machine, answers }) => {
    const answer = answers['cluster dns'] as AskedDns | undefined;
    if (!answer || (answer.answered && answer.rcode === 0 && answer.addresses.includes(ctx.inventory.serviceIp))) return [];
    if (!answer.answered && notAskable(answer.from, answer.why)) return [];
    const name = apiServiceName(ctx.inventory.settings.clusterDomain);
    return [dnsFinding(machine, name, ctx.inventory.clusterDnsIp, ctx.inventory.serviceIp, answer)];
  },
  // Pods elsewhere that do not answer explain a DNS whose pods are there.
  explainedBy: (by) => by.check === 'pod-network' || explainedByACause(by),
});

/** `kubernetes.default.svc.<domain>`: the name every pod asks for the API. */
export function apiServiceName(domain: string): string {
  return `kubernetes.default.svc.${domain}`;
}

/** The finding of a cluster DNS that did not answer as it should. */
function dnsFinding(m: Machine, name: string, server: string, want: string, a: AskedDns): Found {
  const said = !a.answered ? a.why : a.rcode !== 0 ? rcodeName(a.rcode) : a.addresses.length ? `answered ${a.addresses.join(', ')}` : 'answered no address';
  return {
    machine: m.hostname,
    cause: `the cluster DNS does not answer ${name} with ${want} on ${m.hostname} (${said}): names do not resolve in pods there although CoreDNS may show Running and Ready; ` +
      'look next at CoreDNS\'s log (kubectl -n kube-system logs -l k8s-app=kube-dns) and its config (kubectl -n kube-system get configmap coredns -o yaml)',
    evidence: `DNS query for ${name} sent to ${server}:53 from ${fromWhere(m, a.from)}: ${said}`,
    fix: null,
  };
}
