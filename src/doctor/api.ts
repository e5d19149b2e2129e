// The cluster as the API sees it, asked from the jumpbox: straight to the API server over HTTPS
// with pki/'s admin certificate (src/cluster-api/), else with kubectl and pki/jumpbox.kubeconfig.
// Either dials the first control plane's address from machines.txt (its certificate names it), so
// the answer does not depend on this host resolving the cluster's names.
import { sh } from '../shell.ts';
import { runCommand } from '../transport/local.ts';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Inventory } from '../inventory.ts';
import { PKI } from '../layout.ts';
import type { ApiEvidence, NodeState, PodEvent } from './types.ts';
import type { ClusterApi } from '../cluster-api/cluster-api.ts';
import { doctorListsCommand, readDoctorLists } from '../cluster-api/doctor-lists.ts';
import { NoAnswer } from '../cluster-api/https-endpoint.ts';
import { DNS_DEPLOYMENT, DNS_NAMESPACE } from '../dns/manifest.ts';
import { podProblems, type PodObject } from '../steps/support/pods.ts';

/** The kubectl to use: the one on PATH, else the one `hardway download` put into downloads/client. */
export function kubectlPath(inv: Inventory, env: NodeJS.ProcessEnv): string | undefined {
  const onPath = (env.PATH ?? '').split(':').filter(Boolean).map((d) => join(d, 'kubectl')).find((f) => existsSync(f));
  const downloaded = join(inv.dir, 'downloads/client/kubectl');
  return onPath ?? (existsSync(downloaded) ? downloaded : undefined);
}

/** kubectl's arguments before its verb: pki/jumpbox.kubeconfig, the first control plane by address, a short timeout. */
export function kubectlBase(inv: Inventory): string[] {
  const cp = inv.controlPlanes[0]!;
  return ['--kubeconfig', join(inv.dir, PKI.kubeconfig('jumpbox')), `--server=https://${cp.ip}:${inv.settings.apiPort}`, '--request-timeout=5s'];
}

/** The arguments of the one kubectl call: nodes, pods, deployments and events in one List. */
export function kubectlArgs(inv: Inventory): string[] {
  return [...kubectlBase(inv), 'get', 'nodes,pods,deployments,events', '--all-namespaces', '-o', 'json'];
}

/**
 * Asks the API; never throws (a failure is evidence). Directly through `direct` when it answers
 * this machine; kubectl when there is none or it gives no answer (`say` tells which, for -v).
 */
export async function gatherApi(inv: Inventory, env: NodeJS.ProcessEnv, direct?: ClusterApi, say: (line: string) => void = () => {}): Promise<ApiEvidence> {
  const endpoint = direct?.apiServer();
  if (endpoint) {
    const command = doctorListsCommand(endpoint);
    try {
      return { command, ...parseNodesAndPods(await readDoctorLists(endpoint)) };
    } catch (e) {
      if (!(e instanceof NoAnswer)) return { command, error: (e as Error).message, ...NOTHING };
      // A certificate that fails verification is warned (by the ClusterApi's warn), not only said with -v.
      direct!.noAnswer(endpoint, e);
      say(`${e.message}: asking with kubectl instead`);
    } finally {
      direct!.close();
    }
  }
  const kubectl = kubectlPath(inv, env);
  const args = kubectlArgs(inv);
  const command = `kubectl ${args.join(' ').replace(inv.dir + '/', '')}`;
  if (!kubectl) return { command, error: 'kubectl is not on PATH and not in downloads/client (run "hardway download")', ...NOTHING };
  if (!existsSync(join(inv.dir, PKI.kubeconfig('jumpbox')))) {
    return { command, error: `${PKI.kubeconfig('jumpbox')} does not exist (run "hardway up", or "hardway kubeconfigs")`, ...NOTHING };
  }
  const r = await runCommand(sh`${kubectl} ${args}`, { timeoutMs: 10_000 }).catch((e: Error) => ({ code: 1, stdout: '', stderr: e.message }));
  if (r.code !== 0) return { command, error: lastLine(r.stderr) || `exit ${r.code}`, ...NOTHING };
  try {
    return { command, ...parseNodesAndPods(r.stdout) };
  } catch (e) {
    // Never throws: a kubectl that answers no JSON (a stand-in, a wrapper) is evidence too.
    return { command, error: `kubectl's answer is not JSON (${(e as Error).message})`, ...NOTHING };
  }
}

/** What the API said when it could not be asked. */
const NOTHING = { nodes: [], podImages: [], podProblems: [], podEvents: [] };

interface K8sObject {
  kind: string;
  metadata: { name: string; namespace?: string; creationTimestamp?: string };
  /** An Event's: what it is about, why, and when it was last seen. */
  involvedObject?: { kind?: string; name?: string; namespace?: string };
  type?: string;
  reason?: string;
  message?: string;
  lastTimestamp?: string;
  eventTime?: string;
  spec?: { podCIDR?: string; nodeName?: string; replicas?: number; containers?: { image: string }[]; initContainers?: { image: string }[] };
  status?: { conditions?: { type: string; status: string; reason?: string; message?: string }[]; readyReplicas?: number };
}

/** Nodes (Ready condition, pod CIDR), the images pods run on each node, pods that do not run (with their last warning event) and the CoreDNS Deployment, from `kubectl get nodes,pods,deployments,events -o json`. Pure. */
export function parseNodesAndPods(json: string): Omit<ApiEvidence, 'command' | 'error'> {
  const items = (JSON.parse(json) as { items: K8sObject[] }).items;
  const nodes: NodeState[] = items.filter((i) => i.kind === 'Node').map((n) => {
    const ready = n.status?.conditions?.find((c) => c.type === 'Ready');
    return {
      name: n.metadata.name,
      ready: ready?.status ?? '',
      ...(ready?.reason ? { reason: ready.reason } : {}),
      ...(ready?.message ? { message: ready.message } : {}),
      ...(n.spec?.podCIDR ? { podCidr: n.spec.podCIDR } : {}),
    };
  });
  const podImages = items.filter((i) => i.kind === 'Pod' && i.spec?.nodeName).flatMap((p) =>
    [...(p.spec!.containers ?? []), ...(p.spec!.initContainers ?? [])].map((c) => ({ node: p.spec!.nodeName!, image: c.image })));
  const coredns = items.find((i) => i.kind === 'Deployment' && i.metadata.namespace === DNS_NAMESPACE && i.metadata.name === DNS_DEPLOYMENT);
  return {
    nodes,
    podImages,
    podProblems: podProblems(items.filter((i) => i.kind === 'Pod') as unknown as PodObject[]),
    podEvents: lastWarnings(items.filter((i) => i.kind === 'Event')),
    ...(coredns ? { dnsDeployment: { replicas: coredns.spec?.replicas ?? 0, ready: coredns.status?.readyReplicas ?? 0 } } : {}),
  };
}

/** The latest warning event of each pod (by when it was last seen). */
function lastWarnings(events: K8sObject[]): PodEvent[] {
  const when = (e: K8sObject) => Date.parse(e.lastTimestamp ?? e.eventTime ?? e.metadata.creationTimestamp ?? '') || 0;
  const latest = new Map<string, K8sObject>();
  for (const e of events) {
    const o = e.involvedObject;
    if (e.type !== 'Warning' || o?.kind !== 'Pod' || !o.name) continue;
    const key = `${o.namespace ?? 'default'}/${o.name}`;
    const had = latest.get(key);
    if (!had || when(e) >= when(had)) latest.set(key, e);
  }
  return [...latest.values()].map((e) => ({ namespace: e.involvedObject!.namespace ?? 'default', pod: e.involvedObject!.name!, reason: e.reason ?? '', message: (e.message ?? '').trim() }));
}

function lastLine(text: string): string {
  return text.trim().split('\n').pop() ?? '';
}
