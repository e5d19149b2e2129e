// The download cache: release files and .deb packages, each stored under its published digest
// (${XDG_CACHE_HOME:-~/.cache}/hardway/downloads/<hex>). A file only ever enters the cache after its
// digest was verified, through a temp file and a rename, so a cached file is whole or absent.
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, rmSync } from 'node:fs';
import { readdir, rename, rm, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { ensureCacheDir } from './cache-dir.ts';

/** hardway's cache root: $XDG_CACHE_HOME/hardway, else ~/.cache/hardway (the downloads, the builds, the lab's roots). */
export function cacheRoot(env: NodeJS.ProcessEnv): string {
  // The XDG spec says a relative XDG_CACHE_HOME is ignored; every user of the cache must agree on it.
  const base = env.XDG_CACHE_HOME?.startsWith('/') ? env.XDG_CACHE_HOME : join(env.HOME || homedir(), '.cache');
  return join(base, 'hardway');
}

/** The cache directory for downloads, from the environment (XDG_CACHE_HOME, else HOME/.cache). */
export function cacheDir(env: NodeJS.ProcessEnv): string {
  return downloadsIn(cacheRoot(env));
}

/** The download cache inside hardway's cache root (which also holds the builds and apt lists). */
export function downloadsIn(cacheRoot: string): string {
  return join(cacheRoot, 'downloads');
}

/** Where a file with this digest lives in the cache. */
export function cachePath(dir: string, hex: string): string {
  return join(dir, hex);
}

/** A fresh temp path inside the cache (same filesystem, so the final rename is atomic). */
export async function cacheTempPath(dir: string, hint: string): Promise<string> {
  await ensureCacheDir(dir);
  await removeAbandoned(dir, '.partial-');
  return join(dir, `.partial-${hint.replace(/[^A-Za-z0-9._-]/g, '_')}-${randomBytes(4).toString('hex')}`);
}

/** Hex digest of a file. */
export async function hashFile(path: string, algorithm: 'sha256' | 'sha512'): Promise<string> {
  const h = createHash(algorithm);
  for await (const chunk of createReadStream(path)) h.update(chunk as Buffer);
  return h.digest('hex');
}

/**
 * Returns the cache path if a file with this digest is cached and still hashes right. A cached file
 * that no longer matches (disk damage, a hand edit) is removed so it is fetched again.
 */
export async function findVerified(dir: string, algorithm: 'sha256' | 'sha512', hex: string): Promise<string | undefined> {
  const p = cachePath(dir, hex);
  try {
    if (!(await stat(p)).isFile()) return undefined;
  } catch {
    return undefined;
  }
  if ((await hashFile(p, algorithm)) === hex) return p;
  await rm(p, { force: true });
  return undefined;
}

/** Temp entries older than this were left by a run that was killed; newer ones may be another run's. */
const ABANDONED_MS = 6 * 3600 * 1000;

/** Removes `prefix`* entries of `dir` that a killed run left behind (older than a few hours). */
export async function removeAbandoned(dir: string, prefix: string): Promise<void> {
  for (const name of await readdir(dir).catch(() => [] as string[])) {
    if (!name.startsWith(prefix)) continue;
    const p = join(dir, name);
    const st = await stat(p).catch(() => undefined);
    if (st && Date.now() - st.mtimeMs > ABANDONED_MS) await rm(p, { recursive: true, force: true });
  }
}

/** Moves a verified temp file into the cache under its digest. */
export async function commitToCache(dir: string, temp: string, hex: string): Promise<string> {
  const p = cachePath(dir, hex);
  await rename(temp, p);
  return p;
}

// The exit is the process's, once: one listener removes every temp file still registered then,
// however many downloads run at once (a listener each would pile up on process).
const removeAtExit = new Set<string>();
let exitListener = false;

/**
 * Removes `path` if the process exits before the returned function is called: an interrupted run
 * (Ctrl-C or SIGTERM, which exit through process.exit) leaves no temp file in the cache. Call the
 * returned function once the file is renamed or removed.
 */
export function removedOnExit(path: string): () => void {
  if (!exitListener) {
    exitListener = true;
    process.once('exit', () => removeAtExit.forEach((p) => rmSync(p, { force: true })));
  }
  removeAtExit.add(path);
  return () => removeAtExit.delete(path);
}
