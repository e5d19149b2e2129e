// Pods that do not start, per node: ContainerCreating, an image that does not pull, a crash loop, or
// Pending too long, each with the reason of its last warning event. A reason doctor knows (a CNI
// plugin or config missing, the sandbox image missing, an image neither cached nor mirrored, the node
// not Ready) becomes a cause with its fix; another is shown in the event's own words. A pod whose
// cause another finding of its machine already names (the same fix, or the node's state) is told in
// that finding's evidence: the cause is listed once, before the symptom. Pure.
import { DNS_NAMESPACE } from '../../dns/manifest.ts';
import type { PodProblem } from '../../steps/support/pods.ts';
import { hasMirror } from '../../steps/support/sandbox-image.ts';
import { registryOf } from '../context.ts';
import { stepsFix } from '../fixes.ts';
import type { ApiEvidence, Check, DoctorContext, Finding, PodEvent } from '../types.ts';

/** A pod still ContainerCreating or Pending after this many seconds, with no warning event, has waited too long. */
export const PENDING_TOO_LONG_S = 120;

/** Event messages longer than this are cut (a sandbox error repeats the whole pull chain). */
const MESSAGE_MAX = 400;

/** What doctor makes of one pod: a cause and its fix (null when no hardway command fixes it). */
interface Reading {
  cause: string;
  fix: string | null;
  /** The pod's node is not Ready: the node's own finding explains it. */
  nodeNotReady?: boolean;
}

/**
 * A finding per pod that does not start (CoreDNS's pods aside: the dns check reads those), unless
 * `found` (the other findings) already holds its cause: then the pod goes into that finding's evidence.
 * `explainsNode`: whether a finding can explain its machine's node not being Ready.
 */
export function podFindings(ctx: DoctorContext, api: ApiEvidence, found: Finding[], explainsNode: (f: Finding) => boolean): Finding[] {
  const cp = ctx.inventory.controlPlanes[0]!.hostname;
  return api.podProblems.flatMap((p): Finding[] => {
    if (p.trouble === 'not-ready' || (p.namespace === DNS_NAMESPACE && p.labels['k8s-app'] === 'kube-dns')) return [];
    const event = api.podEvents?.find((e) => e.namespace === p.namespace && e.pod === p.name);
    const age = p.created ? (ctx.now - Date.parse(p.created)) / 1000 : Infinity;
    if ((p.trouble === 'creating' || p.trouble === 'pending') && !event && age < PENDING_TOO_LONG_S) return [];
    const machine = p.node || cp;
    const reading = readPod(ctx, api, p, event);
    const evidence = `kubectl get pods,events -n ${p.namespace}: ${p.name}${p.node ? ` on ${p.node}` : ' (not scheduled)'}: ${p.why}` +
      (event ? `; event ${event.reason}: ${cut(event.message)}` : '');
    const mine = found.filter((f) => f.machine === machine);
    const by = (reading.fix !== null ? mine.find((f) => f.fix === reading.fix) : undefined) ??
      (reading.nodeNotReady ? mine.find((f) => explainsNode(f) || f.check === 'node') : undefined) ??
      (p.trouble === 'image-pull' && reading.fix === null ? mine.find((f) => PULL_CHECKS.has(f.check)) : undefined);
    if (by) {
      by.evidence += `; ${evidence}`;
      return [];
    }
    return [{ machine, check: 'pods', cause: reading.cause, evidence, fix: reading.fix }];
  });
}

/** The checks whose finding explains an image that does not pull on their machine. */
const PULL_CHECKS: ReadonlySet<Check> = new Set(['containerd', 'registry', 'pull', 'drift']);

/** Why one pod does not start, as far as its state and its last warning event tell. */
function readPod(ctx: DoctorContext, api: ApiEvidence, p: PodProblem, event: PodEvent | undefined): Reading {
  const pod = `pod ${p.namespace}/${p.name}`;
  const text = `${event?.message ?? ''} ${p.why}`;
  if (!p.node) {
    const noReadyNode = /not-ready|NotReady|unreachable/.test(text);
    return { cause: `${pod} is not scheduled: ${noReadyNode ? 'no node is Ready to take it' : cut(text.trim())}`, fix: null };
  }
  const node = api.nodes.find((n) => n.name === p.node);
  if (node && node.ready !== 'True') return { cause: `${pod} on ${p.node} does not start: node ${p.node} is not Ready`, fix: null, nodeNotReady: true };
  const plugin = /failed to find plugin "([^"]+)"/.exec(text)?.[1];
  if (plugin) {
    return { cause: `the CNI plugin ${plugin} is missing on ${p.node}: no new pod there gets a network (${pod} stays ContainerCreating)`, fix: stepsFix(ctx, ['cni'], p.node) };
  }
  if (/cni config uninitialized|no network config found|network plugin is not ready|failed to load cni config/i.test(text)) {
    return { cause: `no CNI config on ${p.node}: no new pod there gets a network (${pod} stays ContainerCreating)`, fix: stepsFix(ctx, ['cni'], p.node) };
  }
  const sandbox = /sandbox image "([^"]+)"/.exec(text)?.[1];
  if (sandbox) {
    return { cause: `the sandbox (pause) image ${sandbox} is not in ${p.node}'s containerd and cannot be pulled: no new pod there starts (${pod})`, fix: imageFix(ctx, sandbox, p.node) };
  }
  const image = p.trouble === 'image-pull' ? /image "([^"]+)"/.exec(text)?.[1] : undefined;
  if (image && !hasMirror(ctx.inventory, registryOf(image))) {
    const fix = imageFix(ctx, image, p.node);
    return { cause: `${image} is not in ${p.node}'s image cache and cluster.yaml has no mirror for ${registryOf(image)}: ${pod} cannot pull it`, fix: fix.includes('build-images') ? null : fix };
  }
  const what = { 'crash-loop': 'crash-loops', 'image-pull': 'cannot pull its image', creating: 'stays ContainerCreating', pending: 'stays Pending', 'not-ready': 'is not ready' }[p.trouble];
  return { cause: `${pod} on ${p.node} ${what}: ${event ? `${event.reason}: ${cut(event.message)}` : p.why}`, fix: null };
}

/** Loading images/ on the node when an archive there holds `image`; else building them first. */
function imageFix(ctx: DoctorContext, image: string, node: string): string {
  const load = stepsFix(ctx, ['images'], node);
  return ctx.archived?.includes(image) ? load : `hardway build-images${ctx.projectArgs} && ${load}`;
}

function cut(text: string): string {
  return text.length > MESSAGE_MAX ? `${text.slice(0, MESSAGE_MAX)}...` : text;
}
