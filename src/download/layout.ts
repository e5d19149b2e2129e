// Where `hardway download` puts each binary in the project's downloads/ directory, and how later
// steps read what it installed. One table, so a step never re-types a path.
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { FailureError, PreconditionError } from '../errors.ts';
import { statKey } from '../stat-key.ts';

/** The four directories under downloads/, by the machines that get their contents. */
export const DOWNLOAD_DIRS = ['client', 'controller', 'worker', 'cni-plugins'] as const;
/** One of the directories under downloads/. */
export type DownloadDir = (typeof DOWNLOAD_DIRS)[number];

/** Every named binary and the directory it lives in (CNI plugins are not listed: any file in cni-plugins/). */
export const BINARY_DIRS: Readonly<Record<string, DownloadDir>> = {
  kubectl: 'client',
  etcdctl: 'client',
  etcd: 'controller',
  'kube-apiserver': 'controller',
  'kube-controller-manager': 'controller',
  'kube-scheduler': 'controller',
  kubelet: 'worker',
  'kube-proxy': 'worker',
  crictl: 'worker',
  runc: 'worker',
  containerd: 'worker',
  'containerd-shim-runc-v2': 'worker',
  ctr: 'worker',
};

/** The CNI plugins a cluster built by hardway needs (its CNI configs use these three). */
export const REQUIRED_CNI_PLUGINS = ['bridge', 'host-local', 'loopback'] as const;

/** The downloads/ directory of a project. */
export function downloadsDir(projectDir: string): string {
  return join(projectDir, 'downloads');
}

/** The file downloads/manifest.json that lists what `hardway download` installed. */
export function downloadsManifestPath(projectDir: string): string {
  return join(downloadsDir(projectDir), 'manifest.json');
}

/**
 * The path of a binary relative to downloads/: 'etcd' -> 'controller/etcd',
 * 'cni-plugins/bridge' stays as it is. Unknown bare names are a bug in the caller.
 */
export function binaryRelPath(name: string): string {
  if (name.includes('/')) return name;
  const dir = BINARY_DIRS[name];
  if (!dir) throw new Error(`unknown binary "${name}": use a name from BINARY_DIRS or DIR/NAME`);
  return `${dir}/${name}`;
}

/** Where a piece of a file came from: a release file or a Debian package. */
export type FileSource =
  | { kind: 'release'; url: string; digest: string; checksumSource: string }
  | { kind: 'debian'; package: string; packageVersion: string; arch: string; debSha256: string; debFile: string }
  /** Built on this machine from a Debian source package (its .dsc identified by SHA-256), with `builtWith` (go version). */
  | { kind: 'debian-source'; package: string; packageVersion: string; dscSha256: string; builtWith: string };

/** One installed file in downloads/manifest.json. */
export interface InstalledFile {
  /** Relative to downloads/, e.g. 'controller/etcd'. */
  path: string;
  sha256: string;
  component: string;
  version: string;
  source: FileSource;
}

/** downloads/manifest.json: what `hardway download` installed, for which architecture, from where. */
export interface DownloadsManifest {
  schema: 1;
  source: 'release' | 'debian';
  arch: string;
  files: InstalledFile[];
  /** Binaries this source could not provide (Debian source only). */
  missing: string[];
}

/**
 * Manifests already parsed by this process, by what the file is (statKey): every machine's plan of
 * every step asks (1+32: 2,800 opens in one no-op `up`).
 */
const manifests = new Map<string, DownloadsManifest>();

/** Reads downloads/manifest.json; undefined if `hardway download` has not run yet. */
export function readDownloads(projectDir: string): DownloadsManifest | undefined {
  const file = downloadsManifestPath(projectDir);
  const key = statKey(file);
  if (key === undefined) return undefined;
  let manifest = manifests.get(key);
  if (!manifest) manifests.set(key, (manifest = parseDownloads(file)));
  return manifest;
}

function parseDownloads(file: string): DownloadsManifest {
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new FailureError(`${file} is not valid JSON: ${(e as Error).message}`, 'run "hardway download" again to rewrite it');
  }
  const m = data as Partial<DownloadsManifest>;
  if (m?.schema !== 1 || !Array.isArray(m.files) || !Array.isArray(m.missing)) {
    throw new FailureError(`${file} is not a manifest written by this version of hardway`, 'run "hardway download" again to rewrite it');
  }
  return m as DownloadsManifest;
}

/**
 * Throws a FailureError naming every binary that is not an executable file in downloads/,
 * and `hardway download` as the way to get them. Names are bare ('etcd') or DIR/NAME.
 */
export function requireBinaries(projectDir: string, names: readonly string[]): void {
  const missing = names.filter((n) => {
    const p = join(downloadsDir(projectDir), binaryRelPath(n));
    try {
      const st = statSync(p);
      return !st.isFile() || (st.mode & 0o111) === 0;
    } catch {
      return true;
    }
  });
  if (missing.length === 0) return;
  const where = downloadsDir(projectDir);
  const manifest = safeRead(projectDir);
  const note = manifest?.source === 'debian'
    ? ' (the Debian source does not provide all of them; use --source release on a machine with internet access)'
    : '';
  throw new PreconditionError(
    `missing in ${where}: ${missing.map(binaryRelPath).join(', ')}`,
    `run "hardway download" first${note}`,
  );
}

function safeRead(projectDir: string): DownloadsManifest | undefined {
  try {
    return readDownloads(projectDir);
  } catch {
    return undefined;
  }
}
