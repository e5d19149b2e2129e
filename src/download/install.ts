// Laying verified files out in downloads/: each file is staged on the same filesystem, made 0755,
// and renamed over its target only when its bytes differ, so a rerun touches nothing. Files the
// previous run installed and this run does not are removed; files hardway never installed (for
// example test stand-ins copied in by hand) are left alone. manifest.json is written last.
import { chmod, mkdir, mkdtemp, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { FailureError, InputError } from '../errors.ts';
import { hashFile, removeAbandoned } from './cache.ts';
import {
  DOWNLOAD_DIRS,
  downloadsDir,
  downloadsManifestPath,
  readDownloads,
  type DownloadsManifest,
  type FileSource,
  type InstalledFile,
} from './layout.ts';

/** A staged file ready to install: its temp path and what the manifest will say about it. */
export interface StagedFile {
  staged: string;
  /** Relative to downloads/, e.g. 'worker/runc'. */
  path: string;
  component: string;
  version: string;
  source: FileSource;
  /** When known (a cached build), the staged bytes must hash to this or nothing is installed. */
  expectedSha256?: string;
}

/** What an install changed. */
export interface InstallSummary {
  installed: string[];
  unchanged: string[];
  removed: string[];
  manifestChanged: boolean;
  manifest: DownloadsManifest;
}

/** A fresh staging directory inside downloads/ (same filesystem as the targets, so renames are atomic). */
export async function makeStaging(projectDir: string): Promise<string> {
  const dir = downloadsDir(projectDir);
  await mkdir(dir, { recursive: true });
  await removeAbandoned(dir, '.staging-');
  return mkdtemp(join(dir, '.staging-'));
}

/** Installs staged files into downloads/ and writes manifest.json; see the file comment for the rules. */
export async function installFiles(
  projectDir: string,
  files: StagedFile[],
  meta: Pick<DownloadsManifest, 'source' | 'arch' | 'missing'>,
): Promise<InstallSummary> {
  const root = downloadsDir(projectDir);
  const seen = new Set<string>();
  for (const f of files) {
    if (seen.has(f.path)) throw new InputError(`two release files install ${f.path}`, 'fix the "files" rules in the versions manifest');
    if (!(DOWNLOAD_DIRS as readonly string[]).includes(f.path.split('/')[0]!)) throw new Error(`bad install path ${f.path}`);
    seen.add(f.path);
  }
  const previous = await readPrevious(projectDir);
  const installed: string[] = [];
  const unchanged: string[] = [];
  const entries: InstalledFile[] = [];
  for (const f of [...files].sort((a, b) => a.path.localeCompare(b.path))) {
    const target = join(root, f.path);
    const digest = await hashFile(f.staged, 'sha256');
    if (f.expectedSha256 && digest !== f.expectedSha256) {
      throw new FailureError(`${f.path}: the cached file hashes to sha256:${digest}, its build recorded sha256:${f.expectedSha256}`,
        'remove the cache directory named in the download output and run "hardway download" again');
    }
    entries.push({ path: f.path, sha256: digest, component: f.component, version: f.version, source: f.source });
    if (await sameFile(target, digest)) {
      unchanged.push(f.path);
      continue;
    }
    await mkdir(dirname(target), { recursive: true });
    await chmod(f.staged, 0o755);
    await rename(f.staged, target);
    installed.push(f.path);
  }
  const removed: string[] = [];
  for (const old of previous?.files ?? []) {
    if (seen.has(old.path) || !(DOWNLOAD_DIRS as readonly string[]).includes(old.path.split('/')[0]!) || old.path.includes('..')) continue;
    await rm(join(root, old.path), { force: true });
    removed.push(old.path);
  }
  const manifest: DownloadsManifest = { schema: 1, source: meta.source, arch: meta.arch, files: entries, missing: [...meta.missing].sort() };
  const manifestChanged = await writeIfChanged(downloadsManifestPath(projectDir), JSON.stringify(manifest, null, 2) + '\n');
  return { installed, unchanged, removed, manifestChanged, manifest };
}

async function readPrevious(projectDir: string): Promise<DownloadsManifest | undefined> {
  try {
    return readDownloads(projectDir);
  } catch {
    return undefined; // An unreadable manifest is rewritten; its files are simply not cleaned up.
  }
}

async function sameFile(target: string, digest: string): Promise<boolean> {
  try {
    const st = await stat(target);
    return st.isFile() && (st.mode & 0o777) === 0o755 && (await hashFile(target, 'sha256')) === digest;
  } catch {
    return false;
  }
}

async function writeIfChanged(file: string, text: string): Promise<boolean> {
  const old = await readFile(file, 'utf8').catch(() => undefined);
  if (old === text) return false;
  const temp = `${file}.tmp-${process.pid}`;
  await writeFile(temp, text, { mode: 0o644 });
  await rename(temp, file);
  return true;
}

/** Removes a staging directory and whatever is left in it. */
export async function dropStaging(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true });
}
