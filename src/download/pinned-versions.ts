// The versions cluster.yaml pins, checked against what hardway can really fetch or build, so that
// `hardway inventory` refuses what `download` or `render` would refuse later: a version must be in
// the versions manifest (its published digests; src/download/versions.json, or the file
// HARDWAY_VERSIONS_FILE names) or have the digests of its release files under cluster.yaml's
// `checksums:`, and Kubernetes must also be a release hardway renders for. Debian's Kubernetes
// (built by `download --source debian`) is the one other release that can be had.
import { existsSync, readFileSync } from 'node:fs';
import { isNode, parseDocument } from 'yaml';
import { COMPONENTS, type ClusterSettings } from '../cluster-settings.ts';
import { InputError } from '../errors.ts';
import { parseKubernetesVersion, SUPPORTED_KUBERNETES, supportedKubernetesRange } from '../render/kubernetes-version.ts';
import { ARCHES, derivedSpecs, loadVersions } from './versions.ts';

/** The Kubernetes release `hardway download --source debian` builds from Debian 12's source package (1.20.5+really1.20.2). */
export const DEBIAN_KUBERNETES = 'v1.20.2';

/** Refuses (InputError at the line of cluster.yaml) a pinned version that can be neither downloaded, nor built, nor rendered; lists those that can. */
export function checkPinnedVersions(settings: Pick<ClusterSettings, 'versions' | 'checksums'>, cluster: { file: string; shownAs: string }, versions: { file: string; shownAs: string }): void {
  const manifest = loadVersions(versions.file);
  for (const component of COMPONENTS) {
    const version = settings.versions[component];
    const known = Object.keys(manifest.components[component] ?? {});
    const k8s = component === 'kubernetes';
    const renders = (v: string) => {
      const p = parseKubernetesVersion(v);
      return p !== undefined && p.major === SUPPORTED_KUBERNETES.major && p.minor >= SUPPORTED_KUBERNETES.firstMinor && p.minor <= SUPPORTED_KUBERNETES.lastMinor;
    };
    const can = k8s ? [...known.filter(renders), DEBIAN_KUBERNETES] : known;
    // A version cluster.yaml gives the digests of, for every release file of one architecture at least.
    const derived = derivedSpecs(manifest, component, version, settings.checksums);
    const given = derived !== undefined && ARCHES.some((a) => derived.every((s) => s.arch[a]?.digest));
    if (can.includes(version) || (given && (!k8s || renders(version)))) continue;
    const why = k8s && !renders(version)
      ? `hardway renders files for Kubernetes ${supportedKubernetesRange()} only`
      : `hardway has no published checksums for it (${versions.shownAs})`;
    throw new InputError(
      `versions.${component} ${version} cannot be used: ${why}`,
      `use one of: ${can.join(', ')}${k8s ? ` (${DEBIAN_KUBERNETES}: "hardway download --source debian" builds it)` : ''}; ` +
        'another release needs the published digest of each of its release files under checksums: in cluster.yaml (docs/cluster-yaml.md)',
      { file: cluster.shownAs, ...lineOf(cluster.file, component) },
    );
  }
}

/** The line of versions.COMPONENT in cluster.yaml, when it is there. */
function lineOf(file: string, component: string): { line?: number } {
  if (!existsSync(file)) return {};
  const text = readFileSync(file, 'utf8');
  const node = parseDocument(text).getIn(['versions', component], true);
  return isNode(node) && node.range ? { line: text.slice(0, node.range[0]).split('\n').length } : {};
}
