// The versions manifest (src/download/versions.json): which release files make up each component
// version, per architecture, with their published digests. Loaded, validated, and narrowed to the
// versions that cluster.yaml pins.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { COMPONENTS, type Component } from '../cluster-settings.ts';
import { InputError } from '../errors.ts';
import { DOWNLOAD_DIRS } from './layout.ts';

/** Architectures hardway has release files for. */
export const ARCHES = ['amd64', 'arm64'] as const;
/** One supported architecture (Debian's names). */
export type Arch = (typeof ARCHES)[number];

/** The built-in versions manifest, shipped in the source tree. */
// Found from the package root, so the same path works from src/download/ and from the bundle in dist/cli/.
export const BUILTIN_VERSIONS_FILE = fileURLToPath(new URL('../../src/download/versions.json', import.meta.url));

/** One file to take out of a release file: a member of an archive (or the file itself) to a path in downloads/. */
export type FileRule = { from?: string; to: string } | { fromDir: string; toDir: string };

/** A release file as the manifest lists it. */
export interface ArtifactSpec {
  id: string;
  type: 'binary' | 'tar.gz';
  checksumSource: string;
  arch: Partial<Record<Arch, { url: string; digest: string }>>;
  files: FileRule[];
}

/** The whole versions manifest. */
export interface VersionsManifest {
  checksumSources: Record<string, string>;
  components: Partial<Record<Component, Record<string, ArtifactSpec[]>>>;
}

/** A release file to fetch for one architecture, with everything needed to verify and unpack it. */
export interface Artifact {
  id: string;
  component: Component;
  version: string;
  type: 'binary' | 'tar.gz';
  url: string;
  /** 'sha256' or 'sha512'. */
  algorithm: 'sha256' | 'sha512';
  /** Lower-case hex digest as published. */
  hex: string;
  checksumSource: string;
  files: FileRule[];
}

const DIGEST = /^(sha256:[0-9a-f]{64}|sha512:[0-9a-f]{128})$/;

/** Reads and validates a versions manifest; any problem is an InputError naming the file. */
export function loadVersions(file: string): VersionsManifest {
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new InputError(`cannot read the versions manifest: ${(e as Error).message}`, 'fix the file or unset HARDWAY_VERSIONS_FILE', { file });
  }
  const bad = (what: string): never => {
    throw new InputError(`versions manifest: ${what}`, 'see src/download/versions.json for the expected shape', { file });
  };
  const m = data as VersionsManifest;
  if (typeof m !== 'object' || m === null || typeof m.components !== 'object' || typeof m.checksumSources !== 'object') {
    bad('expected an object with "checksumSources" and "components"');
  }
  for (const [component, versions] of Object.entries(m.components)) {
    if (!(COMPONENTS as readonly string[]).includes(component)) bad(`unknown component "${component}"`);
    for (const [version, artifacts] of Object.entries(versions ?? {})) {
      const where = `${component} ${version}`;
      if (!Array.isArray(artifacts) || artifacts.length === 0) bad(`${where}: expected a list of release files`);
      for (const a of artifacts) checkArtifact(a, where, m.checksumSources, bad);
    }
  }
  return m;
}

function checkArtifact(a: ArtifactSpec, where: string, sources: Record<string, string>, bad: (w: string) => never): void {
  if (typeof a.id !== 'string' || !/^[a-z0-9-]+$/.test(a.id)) bad(`${where}: release file without a valid "id"`);
  where = `${where} ${a.id}`;
  if (a.type !== 'binary' && a.type !== 'tar.gz') bad(`${where}: "type" must be "binary" or "tar.gz"`);
  if (!(a.checksumSource in sources)) bad(`${where}: checksumSource "${a.checksumSource}" is not in checksumSources`);
  for (const [arch, f] of Object.entries(a.arch ?? {})) {
    if (!(ARCHES as readonly string[]).includes(arch)) bad(`${where}: unknown architecture "${arch}"`);
    if (typeof f?.url !== 'string' || !/^https?:\/\//.test(f.url)) bad(`${where} ${arch}: "url" must be an http(s) URL`);
    if (typeof f.digest !== 'string' || !DIGEST.test(f.digest)) bad(`${where} ${arch}: "digest" must be sha256:<64 hex> or sha512:<128 hex>`);
  }
  if (!Array.isArray(a.files) || a.files.length === 0) bad(`${where}: "files" must list what to install`);
  for (const r of a.files) {
    const to = 'to' in r ? r.to : r.toDir;
    const dir = to?.split('/')[0];
    if (typeof to !== 'string' || !(DOWNLOAD_DIRS as readonly string[]).includes(dir ?? '') || to.includes('..')) {
      bad(`${where}: install path "${to}" must start with one of ${DOWNLOAD_DIRS.join(', ')}`);
    }
    if (a.type === 'binary' && !('to' in r && r.from === undefined)) bad(`${where}: a "binary" installs exactly itself: use {"to": DIR/NAME}`);
  }
}

/** Where the digests of cluster.yaml's `checksums` are said to come from. */
export const FROM_CLUSTER_YAML = 'cluster-yaml';

/**
 * A version the manifest does not list, made from the release files of one it does (the newest):
 * their URLs and paths with that version replaced by this one (v1.2.3, and 1.2.3 without its v),
 * each with its digest from `checksums` (cluster.yaml: URL to digest); an architecture whose URL has
 * no digest there is left out. Undefined when the component has no version to follow, or when not
 * one of its URLs has a digest given (then the version is unknown, not half-given).
 */
export function derivedSpecs(manifest: VersionsManifest, component: Component, version: string, checksums: Readonly<Record<string, string>> = {}): ArtifactSpec[] | undefined {
  const known = Object.keys(manifest.components[component] ?? {});
  const model = known.at(-1);
  if (model === undefined || !/^v?\d/.test(version)) return undefined;
  const bare = (v: string) => v.replace(/^v/, '');
  const swap = (text: string) => text.split(model).join(version).split(bare(model)).join(bare(version));
  const specs = manifest.components[component]![model]!.map((spec): ArtifactSpec => ({
    ...spec,
    checksumSource: FROM_CLUSTER_YAML,
    arch: Object.fromEntries(Object.entries(spec.arch).flatMap(([arch, f]) => {
      const url = swap(f!.url);
      return [[arch, { url, digest: checksums[url] ?? '' }]];
    })),
    files: spec.files.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, swap(v as string)])) as FileRule),
  }));
  return specs.some((s) => Object.values(s.arch).some((f) => f!.digest !== '')) ? specs : undefined;
}

/** The URLs a derived version still needs digests for, for one architecture. */
export function missingDigests(specs: readonly ArtifactSpec[], arch: Arch): string[] {
  return specs.flatMap((s) => (s.arch[arch] && s.arch[arch]!.digest === '' ? [s.arch[arch]!.url] : []));
}

/**
 * The release files for the pinned versions and one architecture; a version the manifest does not
 * list is taken from cluster.yaml's `checksums` (see derivedSpecs); else an InputError.
 */
export function selectArtifacts(
  manifest: VersionsManifest,
  versions: Record<Component, string>,
  arch: Arch,
  file: string,
  checksums: Readonly<Record<string, string>> = {},
): Artifact[] {
  const out: Artifact[] = [];
  for (const component of COMPONENTS) {
    const version = versions[component];
    const known = manifest.components[component] ?? {};
    const derived = known[version] ? undefined : derivedSpecs(manifest, component, version, checksums);
    const specs = known[version] ?? derived;
    const missing = derived ? missingDigests(derived, arch) : [];
    if (missing.length > 0) {
      throw new InputError(`${component} ${version}: no checksum in cluster.yaml for ${missing.join(', ')}`, `add each under checksums: in cluster.yaml, with its published digest ("URL": sha256:HEX)`);
    }
    if (!specs) {
      throw new InputError(
        `no published checksums known for ${component} ${version}`,
        `use one of: ${Object.keys(known).join(', ') || '(none)'} (versions.${component} in cluster.yaml), or give the published digest of each of its release files under checksums: in cluster.yaml (or add it to ${file})`,
      );
    }
    for (const s of specs) {
      const f = s.arch[arch];
      if (!f) throw new InputError(`${component} ${version}: no ${s.id} release file for ${arch} in ${file}`);
      const [algorithm, hex] = f.digest.split(':') as ['sha256' | 'sha512', string];
      const source = s.checksumSource === FROM_CLUSTER_YAML ? 'checksums in cluster.yaml' : `${s.checksumSource}: ${manifest.checksumSources[s.checksumSource]}`;
      out.push({ id: s.id, component, version, type: s.type, url: f.url, algorithm, hex, checksumSource: source, files: s.files });
    }
  }
  return out;
}

/**
 * Applies the download base URL override: https://dl.k8s.io/release/x becomes BASE/dl.k8s.io/release/x,
 * so a mirror (or a test server on 127.0.0.1) can serve the same paths.
 */
export function withBaseUrl(url: string, base: string | undefined): string {
  if (!base) return url;
  const u = new URL(url);
  return `${base.replace(/\/+$/, '')}/${u.host}${u.pathname}${u.search}`;
}
