// From evidence to findings: every check on every machine, the API's view of the nodes, and the
// order a reader should take them in (most likely cause first). Pure, so recorded evidence is a test.
import type { Machine } from '../inventory.ts';
import { certificateFindings } from './checks/certs.ts';
import { podCidrFindings, routeFindings, sysctlFindings } from './checks/dataplane.ts';
import { cniFindings, nameFindings, serviceFindings, sshFindings } from './checks/machine.ts';
import { pullFindings, registryFileFindings } from './checks/registry.ts';
import { corednsFindings, kubeletDnsFindings } from './checks/dns.ts';
import { driftFindings, NODE_STEPS, unexplainedDrift } from './checks/drift.ts';
import { podFindings } from './checks/pods.ts';
import { CHECKS, type ApiEvidence, type Check, type DoctorContext, type Finding, type MachineEvidence, type NodeState } from './types.ts';

/** The checks that can explain a node that is missing or NotReady (those before 'kube-proxy' in CHECKS). */
const EXPLAINS_NODE: ReadonlySet<Check> = new Set(CHECKS.slice(0, CHECKS.indexOf('kube-proxy')));

/** Every finding, most likely cause first. */
export function diagnose(ctx: DoctorContext, evidence: MachineEvidence[], api: ApiEvidence): Finding[] {
  const byMachine = new Map(evidence.map((e) => [e.machine, e]));
  const asked = ctx.inventory.machines.map((m) => ({ m, ev: byMachine.get(m.hostname) }));
  const found = asked.flatMap(({ m, ev }) => machineFindings(ctx, m, ev));
  // A drift another finding's fix runs (on any machine: a fix without --node runs everywhere) goes into it.
  const drift = unexplainedDrift(asked.flatMap(({ m, ev }) => (ev && !ev.unreachable ? driftFindings(ctx, m, ev) : [])), found);
  // A drift finding can explain a NotReady node only when its step is one the node needs.
  const nodeDrift = new Set(drift.filter((d) => NODE_STEPS.has(d.step)).map((d) => d.finding));
  const explainsNode = (f: Finding) => EXPLAINS_NODE.has(f.check) && (f.check !== 'drift' || nodeDrift.has(f));
  found.push(...drift.map((d) => d.finding));
  if (api.error) {
    const cp = ctx.inventory.controlPlanes[0]!;
    found.push({ machine: cp.hostname, check: 'api', cause: `the API server on ${cp.hostname} does not answer from this jumpbox, so no node's state is known`, evidence: `${api.command}: ${api.error}`, fix: null });
  } else {
    const fromApi = [...podCidrFindings(ctx, api), ...nodeFindings(ctx, api, found, explainsNode), ...corednsFindings(ctx, api, found)];
    // The API's findings (CoreDNS scaled down) may fix a drift too (the dns step's plan sees the same Deployment).
    const kept = new Set(unexplainedDrift(drift, fromApi).map((d) => d.finding));
    found.splice(0, found.length, ...found.filter((f) => f.check !== 'drift' || kept.has(f)), ...fromApi);
    found.push(...podFindings(ctx, api, sortFindings(ctx, found), explainsNode));
  }
  return sortFindings(ctx, found);
}

function machineFindings(ctx: DoctorContext, m: Machine, ev: MachineEvidence | undefined): Finding[] {
  if (!ev) return [];
  if (ev.unreachable) return sshFindings(ctx, m, ev);
  const files = registryFileFindings(ctx, m, ev);
  return [
    ...serviceFindings(ctx, m, ev),
    ...nameFindings(ctx, m, ev),
    ...cniFindings(ctx, m, ev),
    ...certificateFindings(ctx, m, ev),
    ...sysctlFindings(ctx, m, ev),
    ...routeFindings(ctx, m, ev),
    ...kubeletDnsFindings(ctx, m, ev),
    ...files,
    ...pullFindings(ctx, m, ev, files),
  ];
}

/**
 * Each worker the API lists as NotReady, or does not list: the node's state is added to the
 * evidence of the finding that explains it, or is a finding of its own when none on that machine does.
 */
function nodeFindings(ctx: DoctorContext, api: ApiEvidence, found: Finding[], explainsNode: (f: Finding) => boolean): Finding[] {
  return ctx.inventory.workers.flatMap((w): Finding[] => {
    const node = api.nodes.find((n) => n.name === w.hostname);
    if (node?.ready === 'True') return [];
    const state = node ? `${w.hostname} ${describeNode(node)}` : `${w.hostname} is not registered`;
    const explained = found.filter((f) => f.machine === w.hostname && explainsNode(f));
    if (explained.length > 0) {
      const first = explained.sort((a, b) => rank(a) - rank(b))[0]!;
      first.evidence += `; kubectl get nodes: ${state}`;
      return [];
    }
    const cause = node
      ? `node ${w.hostname} is NotReady and doctor found no cause on the machine (a kubelet just restarted takes up to a minute)`
      : `node ${w.hostname} is not registered with the API and doctor found no cause on the machine`;
    return [{ machine: w.hostname, check: 'node', cause, evidence: `${api.command}: ${state}`, fix: null }];
  });
}

/** `Ready=False (KubeletNotReady: ...)` as kubectl would say it. */
function describeNode(n: NodeState): string {
  const why = [n.reason, n.message].filter(Boolean).join(': ');
  return `Ready=${n.ready || 'none'}${why ? ` (${why})` : ''}`;
}

/**
 * A check's place in CHECKS; a CoreDNS pod that does not run for a reason doctor does not know (no
 * fix) is a symptom, placed with the pods: any cause with a fix may be what it suffers from.
 */
const rank = (f: Finding) => CHECKS.indexOf(f.check === 'dns' && f.fix === null ? 'pods' : f.check);

/** Most likely cause first: by check (CHECKS order), then by the machine's place in machines.txt. */
export function sortFindings(ctx: DoctorContext, findings: Finding[]): Finding[] {
  const order = new Map(ctx.inventory.machines.map((m, i) => [m.hostname, i]));
  return [...findings].sort((a, b) => rank(a) - rank(b) || (order.get(a.machine) ?? 0) - (order.get(b.machine) ?? 0));
}
