// Binaries from the project's downloads/ as files to install: checked to be there before any
// machine is touched, hashed once per file version (the hash is cached beside them, keyed by size
// and mtime, so a no-op rerun does not re-read hundreds of megabytes).
import { createHash } from 'node:crypto';
import { createReadStream, existsSync, lstatSync, readdirSync, readFileSync, statSync, type Stats } from 'node:fs';
import { join } from 'node:path';
import { binaryRelPath, downloadsDir, readDownloads, requireBinaries } from '../../download/layout.ts';
import type { DesiredFile } from '../../engine/desired.ts';
import type { LocalFileContent } from '../../engine/types.ts';
import { FailureError } from '../../errors.ts';
import { writeAtomic } from '../../output-file.ts';
import { statKeyOf } from '../../stat-key.ts';

const CACHE_FILE = '.sha256-cache.json';
type HashCache = Record<string, { size: number; mtimeMs: number; sha256: string }>;

/** Desired files that install the named binaries (bare names like 'etcd') into `destDir`, mode 0755. */
export async function binaryFiles(projectDir: string, names: readonly string[], destDir: string): Promise<DesiredFile[]> {
  requireBinaries(projectDir, names);
  return Promise.all(names.map((n) => installAs(projectDir, binaryRelPath(n), `${destDir}/${n}`)));
}

/** Desired files for every CNI plugin in downloads/cni-plugins, installed into `destDir`. */
export async function cniPluginFiles(projectDir: string, required: readonly string[], destDir: string): Promise<DesiredFile[]> {
  requireBinaries(projectDir, required.map((p) => `cni-plugins/${p}`));
  const dir = join(downloadsDir(projectDir), 'cni-plugins');
  const names = readdirSync(dir).filter((n) => !n.startsWith('.') && statSync(join(dir, n)).isFile()).sort();
  return Promise.all(names.map((n) => installAs(projectDir, `cni-plugins/${n}`, `${destDir}/${n}`)));
}

/** True if downloads/ holds this binary (bare name like 'crictl'). */
export function hasBinary(projectDir: string, name: string): boolean {
  return existsSync(join(downloadsDir(projectDir), binaryRelPath(name)));
}

/** The version `hardway download` recorded for a binary (e.g. containerd '1.6.20~ds1-1'), if any. */
export function downloadedVersion(projectDir: string, name: string): string | undefined {
  const rel = binaryRelPath(name);
  return readDownloads(projectDir)?.files.find((f) => f.path === rel)?.version;
}

async function installAs(projectDir: string, rel: string, target: string): Promise<DesiredFile> {
  return { path: target, content: await localFile(downloadsDir(projectDir), rel), mode: 0o755 };
}

/** A local file under `dir` as put content: its size, and its SHA-256 cached in `dir` (see cachedSha256). */
export async function localFile(dir: string, rel: string): Promise<LocalFileContent> {
  const file = join(dir, rel);
  const st = statSync(file);
  return { file, sha256: await cachedSha256(dir, rel, st), size: st.size };
}

/**
 * Digests this process already knows, by what the file is (statKey): each machine's plan asks for
 * the same binaries, and reading the JSON cache for each was 2 of every 3 file opens of a no-op `up`.
 */
const known = new Map<string, string>();

/** SHA-256 of a file under `dir` (downloads/, images/), from the cache there when its size and mtime are unchanged. */
async function cachedSha256(dir: string, rel: string, st: Stats): Promise<string> {
  const key = statKeyOf(join(dir, rel), st);
  let sha256 = known.get(key);
  if (!sha256) known.set(key, (sha256 = await storedSha256(dir, rel, st)));
  return sha256;
}

/** The digest from `dir`'s cache file when its size and mtime are unchanged, else hashed and stored there. */
async function storedSha256(dir: string, rel: string, st: { size: number; mtimeMs: number }): Promise<string> {
  const cacheFile = join(dir, CACHE_FILE);
  const hit = readHashCache(cacheFile)[rel];
  if (hit && hit.size === st.size && hit.mtimeMs === st.mtimeMs) return hit.sha256;
  const sha256 = await hashFile(join(dir, rel));
  // Re-read before writing: other machines' plans hash other files at the same time.
  const latest = readHashCache(cacheFile);
  latest[rel] = { size: st.size, mtimeMs: st.mtimeMs, sha256 };
  try {
    // Temp file beside it, then rename; a link in its place is refused, never followed (a link
    // pointing outside the project must not have hardway, maybe as root, rewrite its target).
    writeAtomic(cacheFile, JSON.stringify(latest, null, 1), 0o644);
  } catch {
    // The cache is an optimisation: a read-only downloads/, or a link there, only costs a re-hash.
  }
  return sha256;
}

/** The digest cache of a directory: empty when absent, damaged, or not a file of its own (a link is not read). */
function readHashCache(cacheFile: string): HashCache {
  try {
    return lstatSync(cacheFile, { throwIfNoEntry: false })?.isFile() ? (JSON.parse(readFileSync(cacheFile, 'utf8')) as HashCache) : {};
  } catch {
    return {}; // a damaged cache only costs a re-hash
  }
}

function hashFile(file: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const h = createHash('sha256');
    createReadStream(file)
      .on('data', (d) => h.update(d))
      .on('error', (e) => reject(new FailureError(`cannot read ${file}: ${e.message}`)))
      .on('end', () => resolve(h.digest('hex')));
  });
}
