// verify: read-only checks of the whole cluster on every machine (a check: facts only, so it cannot
// change anything); every problem found on a machine is listed in one failure for that machine.
import { createHash } from 'node:crypto';
import { severalControlPlanes } from '../api-endpoints.ts';
import { FailureError } from '../errors.ts';
import { missingPodRoutes, podRoutes } from '../render/routes.ts';
import type { CheckStep, StepContext } from '../engine/types.ts';
import type { Inventory, Machine } from '../inventory.ts';
import { CONTROL_PLANE_SERVICES, servicesOfStep, WORKER_SERVICES } from '../command-table.ts';
import { clusterObjects, clusterObjectsAgain, NO_KUBECTL, type KubeObject, type ObjectsRead } from '../probes/kubectl.ts';
import { etcdHealth, type EtcdHealth } from '../probes/etcdctl.ts';
import { DNS_HEALTH_OBJECTS, dnsHealthProblems } from '../dns/health.ts';
import { inspect } from './support/inspect.ts';
import { numberOption } from './options.ts';
import { namesResolved } from '../probes/names.ts';
import { placementContent, placements } from './support/placements.ts';
import { routes } from '../probes/network.ts';
import { images, parseImageList } from '../probes/containerd.ts';
import { archiveImageNames } from './images.ts';
import { sandboxImageOf, sandboxOnWorker } from './support/sandbox-image.ts';

/** The services that must be active on a machine of this role (each named by its step in the step table of command-table.ts). */
export function expectedServices(inv: Inventory, m: Machine): string[] {
  const routes = podRoutes(inv, m).length > 0 ? servicesOfStep('routes') : [];
  const proxy = severalControlPlanes(inv) ? servicesOfStep('api-proxy') : [];
  return m.role === 'control-plane'
    ? [...servicesOfStep('bootstrap-etcd'), ...CONTROL_PLANE_SERVICES, ...routes]
    : [...WORKER_SERVICES, ...proxy, ...servicesOfStep('pod-forwarding'), ...routes];
}

/** The verify step. */
export const verifyStep: CheckStep = {
  kind: 'check',
  name: 'verify',
  title: 'Check the cluster: services, etcd over TLS, names, routes, certificates, nodes, cluster DNS',
  targets: (inv) => inv.machines,
  async check(ctx: StepContext) {
    const { inventory: inv, machine, facts } = ctx;
    const problems: string[] = [];
    const services = expectedServices(inv, machine);
    const names = inv.machines.flatMap((m) => [m.hostname, m.fqdn]);
    const wanted = placements(inv, machine);
    const found = await inspect(facts, wanted.map((w) => w.to), services, {
      names: namesResolved.ask(names),
      routes: routes.ask(),
      ...(machine.role === 'control-plane' ? { etcd: etcdHealth.ask(severalControlPlanes(inv)) } : {}),
      // What containerd holds, for the sandbox image (it pulls that only at the first pod).
      ...(machine.role === 'worker' && sandboxImageOf(inv) !== undefined ? { images: images.ask([sandboxImageOf(inv)!]) } : {}),
      // The nodes too, on the machine that asks the API: a converged cluster needs no other round trip.
      ...(asksApi(inv, machine) ? { nodes: clusterObjects.ask(objectsOf(inv)) } : {}),
    });
    const p = found.probes;

    for (const s of services) {
      const state = found.services.get(s)?.active;
      if (state !== 'active') problems.push(`service ${s} is ${state || 'unknown'}`);
    }
    const first = p.names;
    for (const m of inv.machines) {
      for (const n of [m.hostname, m.fqdn]) {
        const got = first.get(n);
        if (got === m.ip) continue;
        // The kubelet and kube-proxy dial the API server by name: say what that breaks.
        const dials = m.role === 'control-plane' && machine.role === 'worker' ? ': the kubelet and kube-proxy here cannot reach the API server' : '';
        problems.push(got ? `${n} resolves to ${got} on ${machine.hostname}, want ${m.ip}${dials}` : `${n} does not resolve on ${machine.hostname} (want ${m.ip})${dials}`);
      }
    }
    for (const r of missingPodRoutes(inv, machine, p.routes)) problems.push(`no route to ${r.subnet} via ${r.via} (pods of ${r.worker})`);
    if (p.etcd) problems.push(...etcdProblems(inv, p.etcd));

    if (p.images) {
      const cached = p.images.code === 0 ? new Set(parseImageList(p.images.stdout).keys()) : undefined;
      const missing = await sandboxOnWorker(facts, inv, machine.hostname, archiveImageNames(inv.dir), cached, false);
      if (missing) problems.push(`${missing.problem} (${missing.hint})`);
    }

    for (const w of wanted) {
      const f = found.files.get(w.to)!;
      const sha = createHash('sha256').update(placementContent(inv, w)).digest('hex');
      if (!f.exists) problems.push(`${w.to} is missing (from ${w.from})`);
      else if (f.sha256 !== sha) problems.push(`${w.to} differs from ${w.from}`);
      else if (w.secret && (f.mode! & 0o077) !== 0) problems.push(`${w.to} is readable by others (mode ${f.mode!.toString(8)})`);
    }

    if (asksApi(inv, machine)) problems.push(...(await clusterProblems(ctx, p.nodes!)));
    if (problems.length > 0) throw new FailureError(`${problems.length} problem(s) on ${machine.hostname}:\n  - ${problems.join('\n  - ')}`);
  },
};

/** Every worker's Node object and the objects that show cluster DNS serving, read with the admin kubeconfig on the server (one missing is left out). */
const objectsOf = (inv: Inventory) => [...inv.workers.map((w) => `nodes/${w.hostname}`), ...(inv.settings.dns.enabled ? DNS_HEALTH_OBJECTS : [])];

/**
 * What the etcd probe shows: the local member unhealthy, or, with several control planes (where it
 * asks every member of the member list), any control plane that is not a healthy member.
 */
export function etcdProblems(inv: Inventory, answer: EtcdHealth): string[] {
  const unhealthy = answer.members.filter((m) => !m.healthy).map((m) => `${m.url} is unhealthy: ${m.why}`);
  if (!severalControlPlanes(inv)) return answer.ok ? [] : [`etcd is not healthy over TLS: ${answer.error ?? unhealthy.join('; ')}`];
  // With --cluster every member of the member list answers, each at https://IP:2379.
  const healthy = new Set(answer.members.flatMap((m) => (m.healthy ? /^https:\/\/([\d.]+):2379$/.exec(m.url)?.slice(1) ?? [] : [])));
  const missing = inv.controlPlanes.filter((m) => !healthy.has(m.ip));
  if (missing.length === 0) return [];
  const said = unhealthy.filter((l) => missing.some((m) => l.includes(m.ip))).join('; ') || answer.error || 'not in the member list etcd gave';
  return [`etcd member(s) not healthy over TLS: ${missing.map((m) => `${m.hostname} (${m.ip})`).join(', ')}: ${said}`];
}

/** Whether this machine is the one that asks the API for the nodes (the first control-plane machine). */
const asksApi = (inv: Inventory, machine: Machine) => machine.hostname === inv.controlPlanes[0]!.hostname;

/**
 * Every worker registered and Ready, and cluster DNS serving, asked of the API with the admin
 * kubeconfig on the server. Kubelets and CoreDNS just started take a while: asked again every 2 s
 * up to --ready-timeout, and longer for a node whose kubelet is still starting (up to
 * KUBELET_START_WAIT_S from its start: a loaded host takes minutes).
 */
async function clusterProblems(ctx: StepContext, first: ObjectsRead): Promise<string[]> {
  // The batch's answer: all well already (a rerun), or ask again below (stderr, waits).
  if (first.ok && problemsIn(ctx.inventory, first.items).length === 0) return [];
  const timeoutS = numberOption(ctx.options, 'ready-timeout');
  const deadline = Date.now() + timeoutS * 1000;
  for (;;) {
    const { problems, starting } = await clusterProblemsOnce(ctx);
    // --ready-timeout 0 checks once; otherwise a kubelet still starting is waited for from its own start.
    if (problems.length === 0 || Date.now() >= readyDeadline(deadline, timeoutS, starting) || problems[0]!.startsWith('kubectl')) return problems;
    await new Promise((r) => setTimeout(r, 2000));
  }
}

async function clusterProblemsOnce(ctx: StepContext): Promise<{ problems: string[]; starting: NodeStarting[] }> {
  const r = await ctx.facts.wait(clusterObjectsAgain.ask(15, objectsOf(ctx.inventory)));
  if (!r.ok && r.code === NO_KUBECTL) return { problems: [`kubectl is not installed on ${ctx.machine.hostname}, so the nodes cannot be asked for (run "hardway bootstrap-control-plane")`], starting: [] };
  if (!r.ok) return { problems: [`the API does not answer "kubectl get nodes" (kubectl exit ${r.code})`], starting: [] };
  return { problems: problemsIn(ctx.inventory, r.items), starting: kubeletsStarting(r.items, ctx.inventory.workers.map((w) => w.hostname)) };
}

/** The nodes' problems, then cluster DNS's, among the objects read. */
function problemsIn(inv: Inventory, items: readonly KubeObject[]): string[] {
  return [...nodeStates(items, inv.workers.map((w) => w.hostname)), ...dnsHealthProblems(inv, items)];
}

/**
 * How long verify waits for a node whose kubelet is still starting, from that start: a kubelet
 * (re)started on a loaded host took more than a minute for its first PLEG relist.
 */
export const KUBELET_START_WAIT_S = 300;

/** When verify stops waiting: --ready-timeout's deadline, or later for a kubelet still starting (KUBELET_START_WAIT_S from its start); 0 checks once. */
export function readyDeadline(deadline: number, timeoutS: number, starting: readonly NodeStarting[]): number {
  return timeoutS === 0 ? deadline : Math.max(deadline, ...starting.map((s) => s.since + KUBELET_START_WAIT_S * 1000));
}

/** What a kubelet says in its node's Ready condition until its first checks of the runtime have run. */
const STARTING = /pleg has yet to be successful|container runtime status check may not have completed yet/i;

/** A node whose kubelet is still starting, and when it started (its Ready condition's last transition, ms since the epoch). */
export interface NodeStarting {
  node: string;
  since: number;
}

/** The listed workers whose kubelet says it is still starting, among the objects read. */
export function kubeletsStarting(items: readonly KubeObject[], workers: readonly string[]): NodeStarting[] {
  return (items as NodeObject[]).flatMap((n) => {
    if ((n.kind !== undefined && n.kind !== 'Node') || !workers.includes(n.metadata.name)) return [];
    const ready = n.status?.conditions?.find((c) => c.type === 'Ready');
    if (!ready || ready.status === 'True' || !STARTING.test(ready.message ?? '')) return [];
    // Without the time of its start there is nothing to measure from: --ready-timeout alone applies.
    const since = Date.parse(ready.lastTransitionTime ?? '');
    return Number.isNaN(since) ? [] : [{ node: n.metadata.name, since }];
  });
}

/** A Node as `kubectl get -o json` gives it, as far as readiness goes. */
interface NodeObject {
  kind?: string;
  metadata: { name: string };
  status?: { conditions?: { type: string; status: string; reason?: string; message?: string; lastTransitionTime?: string }[] };
  items?: NodeObject[];
}

/** Problems with the listed workers among the objects read (Nodes): missing, or not Ready (with the kubelet's reason). */
export function nodeStates(items: readonly KubeObject[], workers: readonly string[]): string[] {
  const nodes = new Map<string, { status: string; reason?: string; message?: string } | undefined>();
  for (const n of items as NodeObject[]) {
    if (n.kind === undefined || n.kind === 'Node') nodes.set(n.metadata.name, n.status?.conditions?.find((c) => c.type === 'Ready'));
  }
  return workers.flatMap((w) => {
    if (!nodes.has(w)) return [`node ${w} is not registered with the API (its kubelet never reached the API server)`];
    const ready = nodes.get(w);
    if (ready?.status === 'True') return [];
    if (STARTING.test(ready?.message ?? '')) {
      return [`node ${w} is not Ready yet: its kubelet is still starting (${ready!.message}); verify waits up to ${KUBELET_START_WAIT_S} s from its start. ` +
        `Check again with "hardway verify" (or "hardway doctor --node ${w}")`];
    }
    return [`node ${w} is not Ready${ready?.message ? ` (${ready.message})` : ''}`];
  });
}
