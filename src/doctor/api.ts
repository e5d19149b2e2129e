// The cluster as the API sees it, asked from the jumpbox through the probe registry's api-lists:
// straight to the API server over HTTPS with pki/'s admin certificate (src/cluster-api/), else with
// kubectl and pki/jumpbox.kubeconfig on this machine. Either dials the first control plane's address
// from machines.txt (its certificate names it), so the answer does not depend on this host
// resolving the cluster's names; either gives the probe's one typed answer.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Inventory } from '../inventory.ts';
import { PKI } from '../layout.ts';
import type { ApiEvidence, NodeState, PodEvent } from './types.ts';
import type { ClusterApi } from '../cluster-api/cluster-api.ts';
import { DOCTOR_KINDS } from '../cluster-api/answers.ts';
import { answerDirectly } from '../engine/direct-facts.ts';
import { collectionPath, kindOf } from '../cluster-api/resources.ts';
import { createFacts, type Facts } from '../engine/facts.ts';
import { API_LISTS_VERB, apiLists, jumpboxKubectlArgs, type JumpboxKubectl, type KubeObject, type ObjectsRead } from '../probes/kubectl.ts';
import { jumpboxTransport } from '../transport/connector.ts';
import { DNS_DEPLOYMENT, DNS_NAMESPACE, DNS_POD_LABEL } from '../dns/manifest.ts';

/** The cluster DNS pods' label as key and value (the kube-dns Service selects them by it). */
const DNS_LABEL = DNS_POD_LABEL.split('=') as [string, string];
import { podProblems, type PodObject } from '../steps/support/pods.ts';

/** The kubectl to use: the one on PATH, else the one `hardway download` put into downloads/client. */
export function kubectlPath(inv: Inventory, env: NodeJS.ProcessEnv): string | undefined {
  const onPath = (env.PATH ?? '').split(':').filter(Boolean).map((d) => join(d, 'kubectl')).find((f) => existsSync(f));
  const downloaded = join(inv.dir, 'downloads/client/kubectl');
  return onPath ?? (existsSync(downloaded) ? downloaded : undefined);
}

/** kubectl on the jumpbox as doctor and its bundle ask it: `kubectl`, pki/jumpbox.kubeconfig, the first control plane by address. */
export function jumpboxKubectl(inv: Inventory, kubectl: string): JumpboxKubectl {
  const cp = inv.controlPlanes[0]!;
  return { kubectl, kubeconfig: join(inv.dir, PKI.kubeconfig('jumpbox')), server: `https://${cp.ip}:${inv.settings.apiPort}` };
}

/** The jumpbox's facts: the registry's probes of the API asked with kubectl on this machine (no machine of the cluster is asked). */
export function jumpboxFacts(): Facts {
  // kubectl's own requests stop after 5 s; a kubectl that hangs otherwise is stopped too.
  return createFacts(jumpboxTransport(15_000));
}

/** Why kubectl cannot be asked on the jumpbox, if it cannot: it is not there, or pki/jumpbox.kubeconfig is not. */
export function kubectlMissing(inv: Inventory, kubectl: string | undefined): string | undefined {
  if (!kubectl) return 'kubectl is not on PATH and not in downloads/client (run "hardway download")';
  if (!existsSync(join(inv.dir, PKI.kubeconfig('jumpbox')))) return `${PKI.kubeconfig('jumpbox')} does not exist (run "hardway up", or "hardway kubeconfigs")`;
  return undefined;
}

/**
 * Asks the API (the api-lists probe); never throws (a failure is evidence). Directly through
 * `direct` when it answers this machine; kubectl on the jumpbox when there is none or it gives no
 * answer (`say` tells which, for -v). `facts` runs the kubectl (tests pass their own).
 */
export async function gatherApi(inv: Inventory, env: NodeJS.ProcessEnv, direct?: ClusterApi, say: (line: string) => void = () => {}, facts: () => Facts = jumpboxFacts): Promise<ApiEvidence> {
  const kubectl = kubectlPath(inv, env);
  const k = jumpboxKubectl(inv, kubectl ?? 'kubectl');
  const req = apiLists.ask(k);
  const endpoint = direct?.apiServer();
  if (endpoint) {
    const command = `GET ${endpoint.url} ${DOCTOR_KINDS.map((kind) => collectionPath(kindOf(kind))).join(' ')}`;
    try {
      // A certificate that fails verification is warned (by the ClusterApi's warn), not only said with -v.
      const read = await answerDirectly(req, direct!, inv, 'jumpbox', () => {}, (e) => say(`${e.message}: asking with kubectl instead`));
      if (read) return evidenceOf(command, read);
    } catch (e) {
      // It answered, but not as an API server does (a 200 that is not JSON): evidence, no other route.
      return { command, error: (e as Error).message, ...NOTHING };
    } finally {
      direct!.close();
    }
  }
  const command = `kubectl ${[...jumpboxKubectlArgs(k), ...API_LISTS_VERB].join(' ').replace(inv.dir + '/', '')}`;
  const missing = kubectlMissing(inv, kubectl);
  if (missing) return { command, error: missing, ...NOTHING };
  try {
    return evidenceOf(command, (await facts().ask({ lists: req })).lists);
  } catch (e) {
    // The jumpbox's own shell failed (a kubectl that hangs past its time): evidence too.
    return { command, error: (e as Error).message, ...NOTHING };
  }
}

/** Doctor's evidence of the API from the probe's answer. */
function evidenceOf(command: string, read: ObjectsRead): ApiEvidence {
  return read.ok ? { command, ...evidenceFrom(read.items) } : { command, error: read.error, ...NOTHING };
}

/** What the API said when it could not be asked. */
const NOTHING = { nodes: [], podImages: [], podProblems: [], podEvents: [] };

interface K8sObject {
  kind: string;
  metadata: { name: string; namespace?: string; creationTimestamp?: string; deletionTimestamp?: string; labels?: Record<string, string> };
  /** An Event's: what it is about, why, and when it was last seen. */
  involvedObject?: { kind?: string; name?: string; namespace?: string };
  type?: string;
  reason?: string;
  message?: string;
  lastTimestamp?: string;
  eventTime?: string;
  spec?: { podCIDR?: string; nodeName?: string; replicas?: number; containers?: { image: string }[]; initContainers?: { image: string }[] };
  status?: { conditions?: { type: string; status: string; reason?: string; message?: string }[]; readyReplicas?: number; phase?: string; podIP?: string };
}

/** parseNodesAndPods over the text of `kubectl get nodes,pods,deployments,events -o json`. Pure. */
export function parseNodesAndPods(json: string): Omit<ApiEvidence, 'command' | 'error'> {
  return evidenceFrom((JSON.parse(json) as { items: KubeObject[] }).items);
}

/** Nodes (Ready condition, pod CIDR), the images pods run on each node, pods that do not run (with their last warning event) and the CoreDNS Deployment, among the objects of api-lists. Pure. */
export function evidenceFrom(objects: readonly KubeObject[]): Omit<ApiEvidence, 'command' | 'error'> {
  const items = objects as K8sObject[];
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
    dnsPods: items.filter((i) => i.kind === 'Pod' && i.metadata.namespace === DNS_NAMESPACE && i.metadata.labels?.[DNS_LABEL[0]] === DNS_LABEL[1]
      && answersOnItsPort(i) && i.status?.podIP && i.spec?.nodeName)
      .map((p) => ({ name: p.metadata.name, node: p.spec!.nodeName!, ip: p.status!.podIP! })),
  };
}

/**
 * A pod that listens on its port now: Running, Ready, and not being deleted. Why: a pod being
 * replaced (after a fix, a rollout) keeps saying Running while its sandbox and address go away, and
 * one in a crash loop refuses; a connect to either fails with the network working.
 */
function answersOnItsPort(p: K8sObject): boolean {
  return p.status?.phase === 'Running' && !p.metadata.deletionTimestamp
    && p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;
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
