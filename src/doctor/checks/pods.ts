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
import { buildsImages, projectFix, sameFix, stepsFix, type Fix } from '../fixes.ts';
import type { ApiEvidence, DoctorContext, PodEvent } from '../types.ts';
import { doctorCheck, type Found, type Judged } from './check.ts';

/** A pod still ContainerCreating or Pending after this many seconds, with no warning event, has waited too long. */
export const PENDING_TOO_LONG_S = 120;

/** Event messages longer than this are cut (a sandbox error repeats the whole pull chain). */
const MESSAGE_MAX = 400;

/** What doctor makes of one pod: a cause and its fix (null when no hardway command fixes it). */
interface Reading {
  cause: string;
  fix: Fix | null;
  /** The pod's node is not Ready: the node's own finding explains it. */
  nodeNotReady?: boolean;
}

/**
 * A finding per pod that does not start (CoreDNS's pods aside: the dns check reads those). One whose
 * cause another finding of its machine already names is told in that finding's evidence: the same
 * fix; the node not Ready (a finding that explains the node, or the node's own); an image that does
 * not pull, with no fix of its own (containerd, a registry, a test pull, a drift).
 */
export const pods = doctorCheck({
  name: 'pods',
  rank: 200,
  looks: 'pods that do not start (ContainerCreating, an image that does not pull, a crash loop, Pending too long), with the reason of their last warning event',
  api: (ctx, api) => podFindings(ctx, api),
  explainedBy: (by, mine, explains) => {
    if (by.machine !== mine.machine) return false;
    if (mine.fix !== null) return sameFix(by.fix, mine.fix);
    if (mine.about?.nodeNotReady === true && (by.check === 'node' || explains(by, { ...mine, check: 'node' }))) return 0;
    return mine.about?.imagePull === true && PULL_CHECKS.has(by.check) ? 1 : false;
  },
});

function podFindings(ctx: DoctorContext, api: ApiEvidence): Found[] {
  const cp = ctx.inventory.controlPlanes[0]!.hostname;
  return api.podProblems.flatMap((p): Found[] => {
    if (p.trouble === 'not-ready' || (p.namespace === DNS_NAMESPACE && p.labels['k8s-app'] === 'kube-dns')) return [];
    const event = api.podEvents?.find((e) => e.namespace === p.namespace && e.pod === p.name);
    const age = p.created ? (ctx.now - Date.parse(p.created)) / 1000 : Infinity;
    if ((p.trouble === 'creating' || p.trouble === 'pending') && !event && age < PENDING_TOO_LONG_S) return [];
    const machine = p.node || cp;
    const reading = readPod(ctx, api, p, event);
    const evidence = `kubectl get pods,events -n ${p.namespace}: ${p.name}${p.node ? ` on ${p.node}` : ' (not scheduled)'}: ${p.why}` +
      (event ? `; event ${event.reason}: ${cut(event.message)}` : '');
    return [{ machine, cause: reading.cause, evidence, fix: reading.fix,
      about: { ...(reading.nodeNotReady ? { nodeNotReady: true } : {}), ...(p.trouble === 'image-pull' ? { imagePull: true } : {}) } }];
  });
}

/** The checks whose finding explains an image that does not pull on their machine. */
const PULL_CHECKS: ReadonlySet<Judged['check']> = new Set(['containerd', 'registry', 'pull', 'drift']);

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
    return { cause: `the CNI plugin ${plugin} is missing on ${p.node}: no new pod there gets a network (${pod} stays ContainerCreating)`, fix: stepsFix(['cni'], p.node) };
  }
  if (/cni config uninitialized|no network config found|network plugin is not ready|failed to load cni config/i.test(text)) {
    return { cause: `no CNI config on ${p.node}: no new pod there gets a network (${pod} stays ContainerCreating)`, fix: stepsFix(['cni'], p.node) };
  }
  const sandbox = /sandbox image "([^"]+)"/.exec(text)?.[1];
  if (sandbox) {
    return { cause: `the sandbox (pause) image ${sandbox} is not in ${p.node}'s containerd and cannot be pulled: no new pod there starts (${pod})`, fix: imageFix(ctx, sandbox, p.node) };
  }
  const image = p.trouble === 'image-pull' ? /image "([^"]+)"/.exec(text)?.[1] : undefined;
  if (image && !hasMirror(ctx.inventory, registryOf(image))) {
    const fix = imageFix(ctx, image, p.node);
    return { cause: `${image} is not in ${p.node}'s image cache and cluster.yaml has no mirror for ${registryOf(image)}: ${pod} cannot pull it`, fix: buildsImages(fix) ? null : fix };
  }
  const what = { 'crash-loop': 'crash-loops', 'image-pull': 'cannot pull its image', creating: 'stays ContainerCreating', pending: 'stays Pending', 'not-ready': 'is not ready' }[p.trouble];
  return { cause: `${pod} on ${p.node} ${what}: ${event ? `${event.reason}: ${cut(event.message)}` : p.why}`, fix: null };
}

/** Loading images/ on the node when an archive there holds `image`; else building them first. */
function imageFix(ctx: DoctorContext, image: string, node: string): Fix {
  const load = stepsFix(['images'], node);
  return ctx.archived?.includes(image) ? load : [...projectFix('build-images'), ...load];
}

function cut(text: string): string {
  return text.length > MESSAGE_MAX ? `${text.slice(0, MESSAGE_MAX)}...` : text;
}
