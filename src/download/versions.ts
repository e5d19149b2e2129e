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

/** The release files for the pinned versions and one architecture; unknown versions are InputErrors. */
export function selectArtifacts(
  manifest: VersionsManifest,
  versions: Record<Component, string>,
  arch: Arch,
  file: string,
): Artifact[] {
  const out: Artifact[] = [];
  for (const component of COMPONENTS) {
    const version = versions[component];
    const known = manifest.components[component] ?? {};
    const specs = known[version];
    if (!specs) {
      throw new InputError(
        `no published checksums known for ${component} ${version}`,
        `use one of: ${Object.keys(known).join(', ') || '(none)'} (versions.${component} in cluster.yaml), or add it with its published digest to ${file}`,
      );
    }
    for (const s of specs) {
      const f = s.arch[arch];
      if (!f) throw new InputError(`${component} ${version}: no ${s.id} release file for ${arch} in ${file}`);
      const [algorithm, hex] = f.digest.split(':') as ['sha256' | 'sha512', string];
      out.push({ id: s.id, component, version, type: s.type, url: f.url, algorithm, hex, checksumSource: `${s.checksumSource}: ${manifest.checksumSources[s.checksumSource]}`, files: s.files });
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
