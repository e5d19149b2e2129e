// What doctor judges the machines against, read on the jumpbox before any machine is asked: the
// rendered files it compares, pki/'s certificates (never a key), whether the project is a lab, and
// which images to test-pull through the registry mirrors.
import { join } from 'node:path';
import { readOptional } from '../certs/pki-files.ts';
import type { Inventory } from '../inventory.ts';
import { PKI, WORKER } from '../layout.ts';
import { runningPid } from '../lab/boot.ts';
import { machineDir, type LabPaths } from '../lab/names.ts';
import { LAB_REGISTRY_NAME } from '../lab/registry.ts';
import { labOfDir } from '../lab/by-dir.ts';
import { renderMachine } from '../render/machine.ts';
import { kubernetesToRender } from '../steps/support/kubernetes-version.ts';
import { containerdRenderOptions } from '../steps/support/worker-render.ts';
import type { ApiEvidence, LabContext } from './types.ts';
import { archiveNames } from '../steps/images.ts';
import { archiveImages } from '../images/oci.ts';
import { imagesDir, registryOf } from '../images/names.ts';

/** The rendered files doctor compares on a worker: CNI configs, containerd's config, every certs.d file. */
export function renderedForDoctor(inv: Inventory): Record<string, Record<string, string>> {
  const kubernetes = kubernetesToRender(inv);
  const wanted = (p: string) => p === WORKER.cniBridgeConf || p === WORKER.cniLoopbackConf || p === WORKER.containerdConfig || p.startsWith(`${WORKER.containerdCertsDir}/`);
  return Object.fromEntries(inv.workers.map((w) => [w.hostname,
    Object.fromEntries(renderMachine(inv, w, { kubernetes, ...containerdRenderOptions(inv) }).filter((f) => wanted(f.path)).map((f) => [f.path, f.content]))]));
}

/** The certificates of pki/ that machines hold copies of, by pki path (undefined when absent). */
export function pkiCertificates(inv: Inventory): Record<string, string | undefined> {
  const paths = [PKI.ca.crt, PKI.crt('kube-api-server'), PKI.crt('kube-proxy'), ...inv.workers.map((w) => PKI.machine(w.hostname, 'kubelet').crt)];
  return Object.fromEntries(paths.map((p) => [p, readOptional(join(inv.dir, p))]));
}

/** The lab whose directory is the project's, with the machines whose nspawn runs; undefined for real machines. */
export function labOf(inv: Inventory, paths: LabPaths): LabContext | undefined {
  const state = labOfDir(paths, inv.dir);
  if (!state) return undefined;
  const { name } = state.plan.spec;
  const running = state.plan.machines.filter((m) => runningPid(machineDir(paths, name, m.hostname), m) !== undefined).map((m) => m.hostname);
  return { name, running, registry: state.plan.spec.registry === true, registryImages: state.registryImages ?? [] };
}

/** The image names the archives of images/ hold (an archive that cannot be read is left out: `hardway images` says why). */
export function archivedImages(inv: Inventory): string[] {
  return archiveNames(inv.dir).flatMap((name) => {
    try {
      return archiveImages(join(imagesDir(inv.dir), name)).map((i) => i.name);
    } catch {
      return [];
    }
  });
}

/** At most this many images are test-pulled on each worker (each costs a registry round trip). */
export const MAX_TEST_IMAGES = 3;

/**
 * The images to test-pull when none are given: those pods run from a registry that cluster.yaml
 * mirrors, else, in a lab with a registry, the images `lab up --registry` pushed into it.
 */
export function defaultTestImages(inv: Inventory, api: ApiEvidence, lab: LabContext | undefined): string[] {
  const mirrored = new Set(Object.keys(inv.settings.registries ?? {}));
  if (mirrored.size === 0) return [];
  const fromPods = api.podImages.map((p) => p.image).filter((i) => mirrored.has(registryOf(i)));
  const fromLab = lab?.registry && mirrored.has(LAB_REGISTRY_NAME) ? lab.registryImages : [];
  return [...new Set(fromPods.length ? fromPods : fromLab)].slice(0, MAX_TEST_IMAGES);
}

/** The registry an image name is pulled from (defined with the image names; doctor's tests read it here). */
export { registryOf } from '../images/names.ts';
