// What leaves nodes Ready while pods or Services break: bridge netfilter and forwarding off on a
// worker, a pod route missing or pointing elsewhere, and a node whose pod CIDR in the API is not the
// subnet of machines.txt. Pure.
import type { Machine } from '../../inventory.ts';
import { missingPodRoutes } from '../../render/routes.ts';
import { parseRoutes } from '../../probes/network.ts';
import { parseSysctls } from '../../probes/system.ts';
import { WORKER_SYSCTLS } from '../../steps/support/components.ts';
import { stepsFix } from '../fixes.ts';
import type { ApiEvidence, DoctorContext, Finding, MachineEvidence } from '../types.ts';

/** br_netfilter's sysctls and ip_forward on a worker, each wanted at 1. */
export function sysctlFindings(ctx: DoctorContext, m: Machine, ev: MachineEvidence): Finding[] {
  if (m.role !== 'worker' || !ev.probes.sysctls) return [];
  const got = parseSysctls(ev.probes.sysctls.stdout);
  const off = WORKER_SYSCTLS.map((k): [string, string] => [k, got.get(k) ?? '']).filter(([, v]) => v !== '1');
  const bridge = off.filter(([k]) => k.startsWith('net.bridge.'));
  const forward = off.filter(([k]) => k === 'net.ipv4.ip_forward');
  const evidence = (list: [string, string][]) => list.map(([k, v]) => `sysctl ${k}: ${v || '(no such key: br_netfilter not loaded)'}`).join('; ');
  const fix = stepsFix(ctx, ['worker-os'], m.hostname);
  return [
    ...(bridge.length ? [{
      machine: m.hostname, check: 'netfilter' as const, fix, evidence: evidence(bridge),
      cause: `bridged pod traffic on ${m.hostname} bypasses iptables (br_netfilter off): the node stays Ready, but Services answer pods on the same node only by chance`,
    }] : []),
    ...(forward.length ? [{
      machine: m.hostname, check: 'ip-forward' as const, fix, evidence: evidence(forward),
      cause: `${m.hostname} does not forward packets (ip_forward off): pods there cannot reach other nodes or Services`,
    }] : []),
  ];
}

/** Every other worker's pod subnet must be routed via that worker. */
export function routeFindings(ctx: DoctorContext, m: Machine, ev: MachineEvidence): Finding[] {
  if (!ev.probes.routes) return [];
  const live = parseRoutes(ev.probes.routes.stdout);
  const missing = missingPodRoutes(ctx.inventory, m, live);
  if (missing.length === 0) return [];
  const shown = missing.map((r) => {
    const other = live.find((l) => l.dst === r.subnet);
    return other ? `${r.subnet} goes via ${other.via ?? 'a device'}, want via ${r.via} (${r.worker})` : `no route to ${r.subnet} via ${r.via} (${r.worker})`;
  });
  return [{
    machine: m.hostname, check: 'routes', fix: stepsFix(ctx, ['routes'], m.hostname),
    cause: `${m.hostname} has no route to the pods of ${missing.map((r) => r.worker).join(', ')}: nodes stay Ready, but pod-to-pod traffic and Services with endpoints there time out`,
    evidence: `ip -4 route show: ${shown.join('; ')}`,
  }];
}

/** A node registered with a pod CIDR other than the subnet machines.txt gives it (the API never changes it). */
export function podCidrFindings(ctx: DoctorContext, api: ApiEvidence): Finding[] {
  return ctx.inventory.workers.flatMap((w) => {
    const node = api.nodes.find((n) => n.name === w.hostname);
    if (!node?.podCidr || node.podCidr === w.podSubnet) return [];
    return [{
      machine: w.hostname, check: 'pod-subnet' as const, fix: null,
      cause: `node ${w.hostname} is registered with pod CIDR ${node.podCidr}, machines.txt says ${w.podSubnet}; the API never changes a node's pod CIDR: delete the node object (kubectl delete node ${w.hostname}) and restart its kubelet`,
      evidence: `${api.command}: ${w.hostname} spec.podCIDR=${node.podCidr}`,
    }];
  });
}
