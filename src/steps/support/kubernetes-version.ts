// The Kubernetes release whose files the machines get: that of the server binaries in downloads/
// (what the steps install), else versions.kubernetes of cluster.yaml. `hardway render`, every step
// that renders and the remote commands' pre-flight check all ask this one function, so the rendered
// tree is what the machines get, and an unsupported release stops a run before any machine is touched.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseDocument } from 'yaml';
import { defaultSettings } from '../../cluster-settings.ts';
import { binaryRelPath, readDownloads } from '../../download/layout.ts';
import { InputError } from '../../errors.ts';
import type { Inventory } from '../../inventory.ts';
import { parseKubernetesVersion, supportedKubernetes } from '../../render/kubernetes-version.ts';
import type { KubernetesChoice } from '../../render/machine.ts';

/**
 * The binaries whose version decides: the server components. kubectl does not count (a client
 * works across releases, and Debian's says 1.20.5+really1.20.2 beside server binaries of v1.20.2).
 */
export const KUBERNETES_SERVER_BINARIES = ['kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'kubelet', 'kube-proxy'] as const;

/** Where a version read from downloads/ is said to come from. */
export const FROM_DOWNLOADS = 'downloads/manifest.json';
/** Where the fallback version is said to come from. */
export const FROM_SETTINGS = 'versions.kubernetes in cluster.yaml';
/** Where it is said to come from when there is no cluster.yaml to name. */
export const FROM_DEFAULT = "hardway's default versions.kubernetes; there is no cluster.yaml";
/** Where it is said to come from when cluster.yaml is there but does not set it. */
export const FROM_UNSET = "hardway's default versions.kubernetes; cluster.yaml does not set it";

/**
 * Which of the three the fallback version comes from: only a cluster.yaml that sets
 * versions.kubernetes is cited as its source (the file was read and checked before this).
 */
function settingFrom(clusterFile: string, version: string): string {
  // Settings given without a file (tests, a provider's own) are still cluster.yaml's keys.
  if (!existsSync(clusterFile)) return version === defaultSettings().versions.kubernetes ? FROM_DEFAULT : FROM_SETTINGS;
  const doc = parseDocument(readFileSync(clusterFile, 'utf8'));
  return doc.hasIn(['versions', 'kubernetes']) ? FROM_SETTINGS : FROM_UNSET;
}

/**
 * The Kubernetes release to render for, and where it was read: the version downloads/manifest.json
 * records for the server binaries, else settings.versions.kubernetes. InputError when it is outside
 * SUPPORTED_KUBERNETES, or when downloads/ holds server binaries of different releases.
 */
export function kubernetesToRender(inv: Pick<Inventory, 'dir' | 'settings'>): KubernetesChoice {
  const files = readDownloads(inv.dir)?.files ?? [];
  const found = KUBERNETES_SERVER_BINARIES.flatMap((name) => {
    const f = files.find((x) => x.path === binaryRelPath(name));
    return f ? [{ name, version: f.version }] : [];
  });
  if (found.length === 0) {
    const version = inv.settings.versions.kubernetes;
    const from = settingFrom(join(inv.dir, 'cluster.yaml'), version);
    supportedKubernetes(version, from);
    return { version, from };
  }
  const releases = new Set(found.map((f) => parseKubernetesVersion(f.version)?.version ?? f.version));
  if (releases.size > 1) {
    throw new InputError(
      `downloads/ holds Kubernetes server binaries of different releases: ${found.map((f) => `${f.name} ${f.version}`).join(', ')}`,
      'run "hardway download" again so that all of them come from one release',
    );
  }
  const version = found[0]!.version;
  supportedKubernetes(version, FROM_DOWNLOADS);
  return { version, from: FROM_DOWNLOADS };
}
