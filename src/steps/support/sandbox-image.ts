// Where a worker gets the sandbox (pause) image cluster.yaml names (sandboxImage): containerd
// needs it for every pod, and only pulls it at the first pod, so a missing one leaves every node
// Ready and every pod in ContainerCreating. up (before any change, and again in the images step
// on each worker) and verify ask where it comes from: containerd's cache, an archive of images/, a
// registry mirror of cluster.yaml, or its own registry upstream (which the worker must reach).
import { commandFor } from '../../command-table.ts';
import type { Facts } from '../../engine/facts.ts';
import type { Inventory } from '../../inventory.ts';
import { PAUSE_IMAGE, registryOf } from '../../images/names.ts';
import { testPull } from '../../probes/containerd.ts';
import { DEFAULT_REGISTRY } from '../../registry-settings.ts';

/** Where the configured sandbox image comes from, as the jumpbox can tell without asking a worker. */
export type SandboxSource =
  | { kind: 'archive'; archive: string }
  | { kind: 'mirror'; registry: string }
  /** Its own registry, which only a worker with internet access reaches (a test pull tells). */
  | { kind: 'upstream'; registry: string }
  /** No source at all: a `localhost/` name no registry serves, and no archive of images/ holds it. */
  | { kind: 'nowhere'; registry: string };

/** An archive of images/ as far as the image names it holds go. */
export interface ArchiveNames {
  name: string;
  images: readonly { name: string }[];
}

/** The sandbox image cluster.yaml names; undefined when it names none (containerd's own default is left to containerd). */
export function sandboxImageOf(inv: Inventory): string | undefined {
  return inv.settings.sandboxImage;
}

/** Where `image` comes from, given the archives of images/ and the mirrors of cluster.yaml. Pure. */
export function sandboxSource(inv: Inventory, image: string, archives: readonly ArchiveNames[]): SandboxSource {
  const archive = archives.find((a) => a.images.some((i) => i.name === image));
  if (archive) return { kind: 'archive', archive: archive.name };
  const registry = registryOf(image);
  if (hasMirror(inv, registry)) return { kind: 'mirror', registry };
  // `localhost/NAME` names no host:port: containerd would ask https://localhost/, where no registry answers.
  return registry === 'localhost' ? { kind: 'nowhere', registry } : { kind: 'upstream', registry };
}

/** Whether cluster.yaml's registries: give containerd a mirror for `registry` (its own entry, or _default). */
export function hasMirror(inv: Inventory, registry: string): boolean {
  const mirrors = inv.settings.registries ?? {};
  return Object.hasOwn(mirrors, registry) || Object.hasOwn(mirrors, DEFAULT_REGISTRY);
}

/** What gets the image onto the workers, for the messages below. */
export function sandboxHint(image: string, registry: string): string {
  const build = image === PAUSE_IMAGE
    ? `run "hardway build-images" (it writes images/pause.tar holding ${PAUSE_IMAGE}), then "hardway up"`
    : `put an archive holding ${image} in images/ ("hardway build-images" makes images/pause.tar with ${PAUSE_IMAGE}: set sandboxImage to it), then run "hardway up"`;
  return `${build}; or add a mirror of ${registry} under registries: in cluster.yaml`;
}

/** The problem when no source can give a worker the image (`why`: what was found instead). */
export function sandboxProblem(image: string, worker: string, why: string): string {
  return `the sandbox image ${image} (sandboxImage in cluster.yaml) is not in containerd on ${worker}, not in images/, and ${why}: every new pod there would stay in ContainerCreating`;
}

/** What a failed test pull said, in one line. */
export function pullSaid(stdout: string): string {
  return stdout.trim().split('\n').filter(Boolean).pop() ?? 'no answer';
}

/**
 * What keeps `worker` from having the sandbox image, or undefined when nothing does: it is in
 * containerd's cache (`cached`; undefined when containerd did not list its images), or an archive
 * of images/ holds it (loaded by the images step: with `loading`, that counts as there), or a
 * mirror serves it, or a test pull from its registry works on the worker (asked only then).
 */
export async function sandboxOnWorker(facts: Facts, inv: Inventory, worker: string, archives: readonly ArchiveNames[], cached: ReadonlySet<string> | undefined, loading: boolean): Promise<{ problem: string; hint: string } | undefined> {
  const image = sandboxImageOf(inv);
  if (image === undefined || cached?.has(image)) return undefined;
  const source = sandboxSource(inv, image, archives);
  if (source.kind === 'mirror') return undefined;
  if (source.kind === 'archive') {
    if (loading || cached === undefined) return undefined;
    return {
      problem: `the sandbox image ${image} (sandboxImage in cluster.yaml) is in images/${source.archive} but not in containerd on ${worker}: every new pod there would stay in ContainerCreating`,
      hint: `run "${commandFor(['images'], { node: worker })}"`,
    };
  }
  const hint = sandboxHint(image, source.registry);
  if (source.kind === 'nowhere') return { problem: sandboxProblem(image, worker, `no registry serves ${source.registry}/ names`), hint };
  // Without containerd's client (a fresh worker) nothing can be test-pulled yet: the images step asks again once it runs.
  if (cached === undefined) return undefined;
  const pulled = (await facts.ask({ pull: testPull.ask(image) })).pull;
  if (pulled.code === 0) return undefined;
  return { problem: sandboxProblem(image, worker, `${worker} cannot pull it from ${source.registry} (${pullSaid(pulled.stdout)})`), hint };
}

/**
 * The jumpbox's own check, before a run that loads images or starts kubelets changes anything: a
 * sandbox image that no archive of images/ holds and no registry can serve (a `localhost/` name
 * without a mirror). Undefined when it has a source, or none is configured.
 */
export function sandboxWithoutSource(inv: Inventory, archives: readonly ArchiveNames[]): { problem: string; hint: string } | undefined {
  const image = sandboxImageOf(inv);
  if (image === undefined) return undefined;
  const source = sandboxSource(inv, image, archives);
  if (source.kind !== 'nowhere') return undefined;
  return {
    problem: `the sandbox image ${image} (sandboxImage in cluster.yaml) is not in images/ and no registry serves ${source.registry}/ names: the nodes would turn Ready and every pod would stay in ContainerCreating`,
    hint: sandboxHint(image, source.registry),
  };
}
