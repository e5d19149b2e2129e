// images: a cluster without a registry gets its images from archives. Every archive in the
// project's images/ (beside machines.txt; `hardway build-images` makes the pause and web images)
// goes to each worker and is imported into containerd's k8s.io namespace, where the kubelet's CRI
// finds it. Only what differs is done: an archive already on the machine is not sent again, and
// one whose images containerd already has under the same names and digests is not imported again.
// Runs after containerd is up and before the kubelet, which needs the sandbox image.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { DesiredFile } from '../engine/desired.ts';
import type { ProbeResult } from '../engine/facts.ts';
import type { Change, ExecChange, LocalFileContent, ChangeStep, StepContext } from '../engine/types.ts';
import { PreconditionError } from '../errors.ts';
import { imagesDir } from '../images/names.ts';
import { archiveImages, type ArchiveImage } from '../images/oci.ts';
import { WORKER } from '../layout.ts';
import { sh } from '../shell.ts';
import { localFile } from './support/binaries.ts';
import { fileChangesFrom, inspect } from './support/inspect.ts';
import { CRI_NAMESPACE, CTR, images, parseImageList } from '../probes/containerd.ts';
import { sandboxImageOf, sandboxOnWorker } from './support/sandbox-image.ts';

/** An archive of images/ as the step sees it: its file name, its bytes as put content, its images. */
export interface LocalArchive {
  name: string;
  content: LocalFileContent;
  images: ArchiveImage[];
}

/** The archives in the project's images/ (`*.tar` files), sorted; none when there is no images/. */
export function archiveNames(projectDir: string): string[] {
  const dir = imagesDir(projectDir);
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((n) => n.endsWith('.tar') && !n.startsWith('.') && statSync(join(dir, n)).isFile())
    .sort();
}

/** Reads every archive's index.json and hash; an image name held by two archives is an error. */
export async function localArchives(projectDir: string): Promise<LocalArchive[]> {
  const dir = imagesDir(projectDir);
  const archives: LocalArchive[] = [];
  for (const name of archiveNames(projectDir)) {
    archives.push({ name, content: await localFile(dir, name), images: archiveImages(join(dir, name), `images/${name}`) });
  }
  const holder = new Map<string, string>();
  for (const a of archives) {
    for (const image of a.images) {
      const other = holder.get(image.name);
      if (other !== undefined && other !== a.name) {
        throw new PreconditionError(`images/${other} and images/${a.name} both hold ${image.name}: containerd would keep whichever was imported last`, 'keep each image name in one archive');
      }
      holder.set(image.name, a.name);
    }
  }
  return archives;
}

/** The image names each archive of images/ holds (index.json only: nothing is hashed). */
export function archiveImageNames(projectDir: string): { name: string; images: { name: string }[] }[] {
  return archiveNames(projectDir).map((name) => ({ name, images: archiveImages(join(imagesDir(projectDir), name), `images/${name}`) }));
}

/** Where an archive is kept on a worker. */
export function remoteArchivePath(name: string): string {
  return `${WORKER.imagesDir}/${name}`;
}

/**
 * One `ctr images import` per archive that has an image containerd lacks or holds under another
 * digest. When the listing failed (containerd not running yet, as in a dry run of a fresh
 * cluster), every archive is planned, and the reason says why.
 */
export function importChanges(archives: readonly LocalArchive[], listing: ProbeResult): ExecChange[] {
  const listed = listing.code === 0;
  const present = listed ? parseImageList(listing.stdout) : new Map<string, string>();
  const changes: ExecChange[] = [];
  for (const a of archives) {
    const why = a.images.flatMap((i) => {
      const have = present.get(i.name);
      if (have === i.digest) return [];
      if (!listed) return [`${i.name} not known: containerd did not list its images (ctr exit ${listing.code})`];
      return [have === undefined ? `${i.name} not in containerd` : `${i.name} is ${short(have)} in containerd, the archive has ${short(i.digest)}`];
    });
    if (why.length === 0) continue;
    changes.push({ kind: 'exec', cmd: sh`${CTR} -n ${CRI_NAMESPACE} images import ${remoteArchivePath(a.name)}`, reason: why.join('; ') });
  }
  return changes;
}

const short = (digest: string) => digest.slice(0, 'sha256:'.length + 12);

/** The images step. */
export const imagesStep: ChangeStep = {
  name: 'images',
  title: "Load the image archives of images/ into containerd's k8s.io namespace on every worker",
  targets: (inv) => inv.workers,
  idle: (inv) => (archiveNames(inv.dir).length === 0 ? 'no archives (images/*.tar beside machines.txt), nothing to load' : undefined),
  async plan(ctx: StepContext): Promise<Change[]> {
    const archives = await localArchives(ctx.inventory.dir);
    const sandbox = sandboxImageOf(ctx.inventory);
    if (archives.length === 0 && sandbox === undefined) return [];
    const desired: DesiredFile[] = archives.map((a) => ({ path: remoteArchivePath(a.name), content: a.content, mode: 0o644 }));
    // Only the images this step compares: the archives' and the sandbox image.
    const names = [...new Set([...archives.flatMap((a) => a.images.map((i) => i.name)), ...(sandbox === undefined ? [] : [sandbox])])];
    const found = await inspect(ctx.facts, desired.map((d) => d.path), [], { images: images.ask(names) });
    // Before the kubelet: a sandbox image no source gives would leave every pod here in ContainerCreating.
    const listing = found.probes.images!;
    const cached = listing.code === 0 ? new Set(parseImageList(listing.stdout).keys()) : undefined;
    const missing = await sandboxOnWorker(ctx.facts, ctx.inventory, ctx.machine.hostname, archives, cached, true);
    if (missing) throw new PreconditionError(missing.problem, missing.hint);
    // Uploads first: each import reads the archive as it is now on the machine.
    return [...fileChangesFrom(found, desired), ...importChanges(archives, listing)];
  },
};
