// What leaves nodes Ready while pods or Services break: bridge netfilter and forwarding off on a
// worker, a pod route missing or pointing elsewhere, and a pod subnet other than machines.txt's (in
// a worker's CNI config, or the node's pod CIDR in the API). Pure.
import type { Machine } from '../../inventory.ts';
import { WORKER } from '../../layout.ts';
import { missingPodRoutes } from '../../render/routes.ts';
import { filterTable, routes as routeTable } from '../../probes/network.ts';
import { podTrafficDropped } from '../forwarding.ts';
import { sysctls } from '../../probes/system.ts';
import { WORKER_SYSCTLS } from '../../steps/support/components.ts';
import { stepsFix } from '../fixes.ts';
import { doctorCheck, type AskOf, type Found } from './check.ts';
import { cniConfigs, otherSubnet } from './machine.ts';

/** The kernel settings a worker needs, one sysctl read for both checks. */
const sysctlProbes = ({ machine }: AskOf) => (machine.role === 'worker' ? { sysctls: sysctls.ask(WORKER_SYSCTLS) } : {});

/** The worker settings of `keys` that are not 1, as evidence. */
function settingsOff(m: Machine, got: Map<string, string> | undefined, which: (key: string) => boolean): { off: [string, string][]; evidence: string } {
  const off = m.role !== 'worker' || !got ? [] : WORKER_SYSCTLS.filter(which).map((k): [string, string] => [k, got.get(k) ?? '']).filter(([, v]) => v !== '1');
  return { off, evidence: off.map(([k, v]) => `sysctl ${k}: ${v || '(no such key: br_netfilter not loaded)'}`).join('; ') };
}

/** br_netfilter's sysctls on a worker, each wanted at 1. */
export const netfilter = doctorCheck({
  name: 'netfilter',
  rank: 110,
  looks: "br_netfilter's sysctls (net.bridge.bridge-nf-call-iptables, -ip6tables) are 1 on each worker",
  asks: sysctlProbes,
  judge: ({ machine: m, answers }): Found[] => {
    const { off, evidence } = settingsOff(m, (answers as { sysctls?: Map<string, string> }).sysctls, (k) => k.startsWith('net.bridge.'));
    return off.length === 0 ? [] : [{
      machine: m.hostname, fix: stepsFix(['worker-os'], m.hostname), evidence,
      cause: `bridged pod traffic on ${m.hostname} bypasses iptables (br_netfilter off): the node stays Ready, but Services answer pods on the same node only by chance`,
    }];
  },
});

/** ip_forward on a worker, wanted at 1. */
export const ipForward = doctorCheck({
  name: 'ip-forward',
  rank: 120,
  looks: 'net.ipv4.ip_forward is 1 on each worker',
  asks: sysctlProbes,
  judge: ({ machine: m, answers }): Found[] => {
    const { off, evidence } = settingsOff(m, (answers as { sysctls?: Map<string, string> }).sysctls, (k) => k === 'net.ipv4.ip_forward');
    return off.length === 0 ? [] : [{
      machine: m.hostname, fix: stepsFix(['worker-os'], m.hostname), evidence,
      cause: `${m.hostname} does not forward packets (ip_forward off): pods there cannot reach other nodes or Services`,
    }];
  },
});

/** A worker whose firewall drops forwarded pod traffic (FORWARD's policy DROP, as Docker leaves it, without hardway's chain first); it explains the pod-forwarding step's drift there. */
export const forwarding = doctorCheck({
  name: 'forwarding',
  rank: 125,
  looks: "each worker's FORWARD chain lets pod traffic through (a policy of DROP, as Docker leaves it, drops it unless hardway's chain comes first)",
  asks: ({ machine }) => (machine.role === 'worker' ? { filter: filterTable.ask() } : {}),
  judge: ({ ctx, machine: m, answers }): Found[] => {
    const verdict = answers.filter && podTrafficDropped(answers.filter, ctx.inventory.settings.clusterCidr);
    return verdict ? [{
      machine: m.hostname, fix: stepsFix(['pod-forwarding'], m.hostname), evidence: verdict.evidence,
      cause: `${m.hostname} drops pod traffic it forwards: ${verdict.cause}; the node stays Ready, but pods elsewhere cannot reach pods there`,
    }] : [];
  },
  explains: { drift: (mine, theirs) => mine.machine === theirs.machine && theirs.about?.step === 'pod-forwarding' },
});

/** Every other worker's pod subnet must be routed via that worker. */
export const routes = doctorCheck({
  name: 'routes',
  rank: 130,
  looks: "each machine routes every other worker's pod subnet via that worker",
  asks: () => ({ routes: routeTable.ask() }),
  judge: ({ ctx, machine: m, answers }): Found[] => {
    const live = answers.routes;
    if (!live) return [];
    const missing = missingPodRoutes(ctx.inventory, m, live);
    if (missing.length === 0) return [];
    const shown = missing.map((r) => {
      const other = live.find((l) => l.dst === r.subnet);
      return other ? `${r.subnet} goes via ${other.via ?? 'a device'}, want via ${r.via} (${r.worker})` : `no route to ${r.subnet} via ${r.via} (${r.worker})`;
    });
    return [{
      machine: m.hostname, fix: stepsFix(['routes'], m.hostname),
      cause: `${m.hostname} has no route to the pods of ${missing.map((r) => r.worker).join(', ')}: nodes stay Ready, but pod-to-pod traffic and Services with endpoints there time out`,
      evidence: `ip -4 route show: ${shown.join('; ')}`,
    }];
  },
});

/**
 * A worker whose CNI config gives pods addresses from another subnet than machines.txt, and a node
 * registered with a pod CIDR other than that subnet (the API never changes it).
 */
export const podSubnet = doctorCheck({
  name: 'pod-subnet',
  rank: 140,
  looks: "each worker's CNI config and its node's pod CIDR in the API give pods the subnet machines.txt says",
  reads: ({ machine, rendered }) => (machine.role === 'worker' ? rendered.filter((p) => p === WORKER.cniBridgeConf) : []),
  judge: ({ ctx, machine: m, files }): Found[] => (m.role !== 'worker' ? [] : cniConfigs(ctx, m, files).flatMap((path) => {
    const conf = files[path];
    const subnet = conf && conf !== ctx.rendered[m.hostname]?.[path] ? otherSubnet(m, path, conf) : undefined;
    return subnet === undefined ? [] : [{
      machine: m.hostname, fix: stepsFix(['cni'], m.hostname), evidence: `${path}: "subnet": "${subnet}"`,
      cause: `the CNI config on ${m.hostname} gives pods addresses from ${subnet}, machines.txt says ${m.podSubnet}: other machines route ${m.podSubnet} here`,
    }];
  })),
  api: (ctx, api) => ctx.inventory.workers.flatMap((w): Found[] => {
    const node = api.nodes.find((n) => n.name === w.hostname);
    if (!node?.podCidr || node.podCidr === w.podSubnet) return [];
    return [{
      machine: w.hostname, fix: null,
      cause: `node ${w.hostname} is registered with pod CIDR ${node.podCidr}, machines.txt says ${w.podSubnet}; the API never changes a node's pod CIDR: delete the node object (kubectl delete node ${w.hostname}) and restart its kubelet`,
      evidence: `${api.command}: ${w.hostname} spec.podCIDR=${node.podCidr}`,
    }];
  }),
});
