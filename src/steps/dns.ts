// dns: the cluster DNS add-on. CoreDNS (a Deployment of two, its ConfigMap, service account and
// RBAC) and the kube-dns Service at the address every kubelet hands to pods as clusterDNS.
// Planned from the live objects, read with the other plans' cluster reads: an object is applied
// only when it lacks a field of the manifest, so a rerun changes nothing. dns.enabled: false
// removes what hardway made. A CoreDNS pod that crash-loops is replaced, because a pod keeps the
// resolver file its node gave it at start: after that node's kubelet is fixed (a stub resolver in
// resolvConf makes CoreDNS loop), only a new pod gets the right one.
import { FailureError } from '../errors.ts';
import { sh } from '../shell.ts';
import type { Change, ChangeStep, StepContext, VerifyContext } from '../engine/types.ts';
import type { Inventory } from '../inventory.ts';
import { parseKubernetesVersion } from '../render/kubernetes-version.ts';
import { DNS_DEPLOYMENT, DNS_NAMESPACE, DNS_POD_LABEL, dnsObjects, type DnsObject } from '../dns/manifest.ts';
import { corednsImage } from '../dns/image.ts';
import { COREDNS_IMAGE } from '../images/names.ts';
import { localKubectl } from '../probes/api.ts';
import { findObject, podsLabelled, rolloutDone, type KubeObject } from '../probes/kubectl.ts';
import { holdsFields, readLiveObjects } from './support/cluster-objects.ts';
import { kubernetesToRender } from './support/kubernetes-version.ts';
import { podProblems, type PodObject, type PodProblem } from './support/pods.ts';
import { numberOption } from './options.ts';

/** Every object of the add-on by TYPE/NAME, whatever cluster.yaml says (dns.enabled: false removes them). */
export const DNS_RESOURCES = ['serviceaccount/coredns', 'clusterrole/system:coredns', 'clusterrolebinding/system:coredns', 'configmap/coredns', 'deployment/coredns', 'service/kube-dns'] as const;

/** The label every object hardway made carries: only those are removed when the add-on is turned off. */
const MANAGED = 'app.kubernetes.io/managed-by';

interface LiveObject extends KubeObject {
  metadata?: { name?: string; namespace?: string; labels?: Record<string, string> };
  spec?: { clusterIP?: string; replicas?: number };
  status?: { replicas?: number; readyReplicas?: number; availableReplicas?: number };
}

/** The Kubernetes minor whose CoreDNS image the cluster runs (the release the machines get). */
export function clusterMinor(inv: Inventory): number {
  const k8s = kubernetesToRender(inv);
  return parseKubernetesVersion(k8s.version)!.minor;
}

const kubectl = (args: ReturnType<typeof sh>) => localKubectl(args, 30);

/** What the scheduler says of a pod no node takes because none is Ready yet (taints of NotReady or unreachable nodes). */
const NODES_NOT_READY = /^Unschedulable: 0\/\d+ nodes are available: (?:\d+ node\(s\) had taint \{node\.kubernetes\.io\/(?:not-ready|unreachable): \}, that the pod didn't tolerate(?:, |\.$))+/;

/** The dns step (first control-plane machine: the objects are cluster-wide). */
export const dnsStep: ChangeStep = {
  name: 'dns',
  title: 'Cluster DNS: CoreDNS and the kube-dns Service',
  targets: (inv) => inv.controlPlanes.slice(0, 1),
  async plan(ctx: StepContext): Promise<Change[]> {
    const inv = ctx.inventory;
    const wanted = inv.settings.dns.enabled ? dnsObjects(inv, clusterMinor(inv)) : [];
    const live = await readLiveObjects<LiveObject>(ctx, DNS_RESOURCES, 'hardway bootstrap-control-plane');
    if ('notYet' in live) {
      return wanted.length ? [applyChange(wanted, `CoreDNS and the kube-dns Service at ${inv.clusterDnsIp}: ${live.notYet}`)] : [];
    }
    if (!inv.settings.dns.enabled) return removeChanges(live.items);
    const changes: Change[] = [];
    const service = findObject(live.items, 'Service', 'kube-dns');
    if (service && service.spec?.clusterIP !== inv.clusterDnsIp) {
      // A Service's address cannot change in place: it is removed, then made anew at the new one.
      changes.push({ kind: 'exec', cmd: kubectl(sh`delete service kube-dns -n ${DNS_NAMESPACE} --wait=true`), api: { op: 'delete', resources: ['service/kube-dns'], wait: true },
        reason: `the kube-dns Service has address ${service.spec?.clusterIP ?? 'none'}, want ${inv.clusterDnsIp} (an address cannot change: the Service is made anew)` });
    }
    const differ = wanted.filter((w) => !holdsFields(findObject(live.items, w.kind, w.name), w.object) || (w.kind === 'Service' && changes.length > 0));
    if (differ.length > 0) changes.push(applyChange(differ, `${differ.map((d) => d.resource).join(', ')} missing or different`));
    // Pods are read only when the Deployment is short of ready replicas: a healthy rerun asks nothing more.
    const deployment = findObject(live.items, 'Deployment', DNS_DEPLOYMENT);
    if (deployment && (deployment.status?.readyReplicas ?? 0) < (deployment.spec?.replicas ?? 0)) {
      changes.push(...(await crashChanges(ctx)));
    }
    return changes;
  },
  async verify(ctx: VerifyContext): Promise<void> {
    if (!ctx.inventory.settings.dns.enabled || ctx.applied.length === 0) return;
    // Applied now: CoreDNS must come up (image on the nodes, Corefile accepted, API reachable from the pods).
    const timeoutS = Math.max(numberOption(ctx.options, 'ready-timeout'), 60);
    const rollout = () => ctx.facts.wait(rolloutDone.ask(timeoutS, DNS_DEPLOYMENT, DNS_NAMESPACE));
    const podsNow = async () => {
      const { pods } = await ctx.facts.ask({ pods: podsLabelled.ask(DNS_NAMESPACE, DNS_POD_LABEL) });
      return pods.ok ? podProblems(pods.items as PodObject[]) : [];
    };
    let r = await rollout();
    let waited = timeoutS;
    if (!r.ok) {
      let problems = await podsNow();
      // Pods still being made or not ready yet, none failing: a loaded host (a 1+32 lab booting its
      // kubelets took longer than 60 s). Waited for once more before it counts as a failure.
      if (problems.every(stillStarting)) {
        ctx.log.info(`CoreDNS is still starting after ${timeoutS}s${problems.length ? ` (${problems.map((p) => `${p.name}: ${p.why}`).join('; ')})` : ''}: waiting up to ${timeoutS}s more`);
        r = await rollout();
        waited += timeoutS;
        if (r.ok) return;
        problems = await podsNow();
      }
      // No node is Ready yet (kubelets just started): not the add-on's failure; verify waits for both.
      if (problems.length > 0 && problems.every((p) => p.trouble === 'pending' && NODES_NOT_READY.test(p.why))) {
        ctx.log.info(`CoreDNS waits for a Ready node (${problems[0]!.why}); verify waits for the nodes and checks cluster DNS`);
        return;
      }
      const why = problems.map((p) => `${p.name} on ${p.node || 'no node'}: ${p.why}`);
      const image = corednsImage(ctx.inventory.settings, clusterMinor(ctx.inventory));
      const offline = image === COREDNS_IMAGE && why.some((w) => /ErrImagePull|ImagePullBackOff/.test(w));
      throw new FailureError(`CoreDNS did not become available within ${waited}s: ${r.said}${why.length ? `\n  - ${why.join('\n  - ')}` : ''}`,
        offline ? `${image} is built offline: run "hardway build-images", then "hardway images" (or "hardway up")` : 'run "hardway doctor": it names the pods that do not start and why');
    }
  },
};

/** A CoreDNS pod being made, not ready yet without a crash (podProblems), or whose one start failed in the runtime: it may only be slow. */
function stillStarting(p: PodProblem): boolean {
  return (p.trouble === 'creating' && p.why === 'ContainerCreating') || p.trouble === 'not-ready'
    // The runtime failed its one start (seen once at 1+32: runc found no cpuset under the pod's new
    // cgroup while 32 kubelets started); the kubelet tries again after 10 s.
    || (p.trouble === 'crash-loop' && p.failedToStartOnce === true);
}

/** One apply of the objects that differ, in the manifest's order (server-side from the jumpbox, else `kubectl apply`). */
function applyChange(objects: DnsObject[], reason: string): Change {
  return { kind: 'exec', cmd: kubectl(sh`apply -f -`), stdin: objects.map((o) => o.yaml).join(''), api: { op: 'apply', objects: objects.map((o) => ({ resource: o.resource, yaml: o.yaml })) }, reason };
}

/** dns.enabled: false: hardway's own objects of the add-on (labelled by it) are deleted, the Service and Deployment first. */
function removeChanges(items: LiveObject[]): Change[] {
  const ours = [...DNS_RESOURCES].reverse().filter((r) => {
    const [type, name] = r.split('/') as [string, string];
    return items.some((o) => o.kind?.toLowerCase() === type && o.metadata?.name === name && o.metadata?.labels?.[MANAGED] === 'hardway');
  });
  if (ours.length === 0) return [];
  return [{ kind: 'exec', cmd: kubectl(sh`delete ${ours} -n ${DNS_NAMESPACE} --ignore-not-found`), api: { op: 'delete', resources: ours, wait: true }, reason: 'dns.enabled is false in cluster.yaml: the add-on hardway made is removed' }];
}

/**
 * A delete of each CoreDNS pod that crash-loops (podProblems counts one caught between two crashes
 * too): its Deployment makes a new one, with its node's resolver settings as they are now.
 */
async function crashChanges(ctx: StepContext): Promise<Change[]> {
  const { pods: r } = await ctx.facts.ask({ pods: podsLabelled.ask(DNS_NAMESPACE, DNS_POD_LABEL) });
  if (!r.ok) return [];
  return podProblems(r.items as PodObject[]).filter((p) => p.trouble === 'crash-loop').map((p): Change => ({
    kind: 'exec',
    cmd: kubectl(sh`delete pod ${p.name} -n ${DNS_NAMESPACE} --wait=false`),
    api: { op: 'delete', resources: [`pod/${p.name}`], wait: false },
    reason: `CoreDNS pod ${p.name} on ${p.node} crash-loops (${p.why}): replaced, so that it starts with its node's resolver settings as they are now`,
  }));
}
