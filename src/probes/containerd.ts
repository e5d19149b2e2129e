// Probes of containerd: the images its Kubernetes namespace holds, the registry directories
// hardway wrote, and a test pull through the mirrors that bypasses the node's image cache.
import { WORKER } from '../layout.ts';
import { HOSTS_TOML_MARKER } from '../render/registries.ts';
import { sh, type Command } from '../shell.ts';
import { mergeableProbe, probe } from './probe.ts';

/** The namespace of containerd that the kubelet's CRI uses. */
export const CRI_NAMESPACE = 'k8s.io';

/** containerd's client, where hardway installs it. */
export const CTR = `${WORKER.bin}/ctr`;

/** Image name -> target digest, from `ctr images ls` (REF TYPE DIGEST SIZE PLATFORMS LABELS). */
export function parseImageList(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of text.split('\n')) {
    const [ref, , digest] = line.trim().split(/\s+/);
    if (!ref || ref === 'REF' || !digest || !/^sha256:[0-9a-f]{64}$/.test(digest)) continue;
    out.set(ref, digest);
  }
  return out;
}

/**
 * One `ctr images ls` for the images named (all of them when none is): containerd's filters of
 * one call are ORed, each name quoted as its filter syntax wants (a `/` would start a regex).
 */
export function imagesCommand(names: readonly string[]): Command {
  return sh`${CTR} -n ${CRI_NAMESPACE} images ls ${names.map((n) => `name==${JSON.stringify(n)}`)}`;
}

/**
 * What containerd's k8s.io namespace holds of the images named: the raw answer of `ctr images ls`
 * (read with parseImageList); the steps and checks asking at once share one call for all their names.
 */
export const images = mergeableProbe('images', imagesCommand, (a) => a);

/**
 * A fetch of `image`'s manifest from the registry itself (through the mirrors of certs.d), never
 * from the node's image cache; it goes to /dev/null, nothing is stored.
 */
export const testPull = probe('test-pull', (image: string) => sh`PATH=$PATH:${WORKER.bin}; timeout 10 ctr content fetch-object --hosts-dir ${WORKER.containerdCertsDir} ${image} 2>&1 >/dev/null`);

/**
 * Every entry of each certs.d directory whose hosts.toml starts with hardway's marker, one
 * `<dir>/<name>` per line (nothing when certs.d does not exist). No process per directory.
 */
export const markedRegistryDirs = probe('marked-registry-dirs', () =>
  sh`cd ${WORKER.containerdCertsDir} 2>/dev/null || exit 0; for d in *; do [ -f "$d/hosts.toml" ] || continue; first=; IFS= read -r first < "$d/hosts.toml"; case $first in ${HOSTS_TOML_MARKER}*) for f in "$d"/*; do printf '%s\\n' "$f"; done ;; esac; done`);
