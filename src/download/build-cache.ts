// Builds kept in hardway's cache (the Kubernetes server binaries, the CoreDNS binary): a finished
// build is a directory holding its files and build.json, made in a work directory and renamed into
// place in one step, build.json last, so a directory with a build.json is a whole build. One build
// of the same inputs runs at a time across processes: the others wait for it (the project lock's
// race-free lock file, src/lock.ts) and then take its result from the cache.
import { readFileSync } from 'node:fs';
import { mkdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { withFileLock, type LockDeps } from '../lock.ts';
import { PreconditionError } from '../errors.ts';
import { tryLocal } from '../transport/local.ts';
import { hashFile } from './cache.ts';
import { ensureCacheDir } from './cache-dir.ts';

/** The part of every build record this module checks: each built file's SHA-256 and size. */
export interface BuiltFiles {
  files: Record<string, { sha256: string; size: number }>;
}

/** Go's build cache inside hardway's cache root, shared by every Go build (content-addressed, so safe to share). */
export const GO_BUILD_CACHE = 'go-build-cache';

/** The name of the record in a build directory. */
export const BUILD_RECORD = 'build.json';

/**
 * The record of a finished build in `dir`, or undefined when there is none, it names no file, or a
 * file's bytes are not those recorded (size first, then SHA-256: a same-size replacement is caught).
 */
async function readBuildRecord<T extends BuiltFiles>(dir: string): Promise<T | undefined> {
  try {
    const record = JSON.parse(readFileSync(join(dir, BUILD_RECORD), 'utf8')) as T;
    const files = Object.entries(record.files);
    if (files.length === 0) return undefined;
    // A file changed or removed since (by hand, or disk trouble) means the build is not trusted:
    // its content is compared, not only its size, as the download cache compares its files.
    for (const [name, f] of files) {
      const st = await stat(join(dir, name));
      if (!st.isFile() || st.size !== f.size) return undefined;
    }
    for (const [name, f] of files) {
      if ((await hashFile(join(dir, name), 'sha256')) !== f.sha256) return undefined;
    }
    return record;
  } catch {
    return undefined;
  }
}

/** A build kept in the cache: where it goes, how a cached one is judged and said, and how one is made. */
export interface CachedBuild<R extends BuiltFiles> {
  /** The finished build's directory: its files and build.json. */
  final: string;
  /** The work directory: one per inputs, not per run, since Go's build cache keys include the paths compiled. */
  work: string;
  /** Names the build in the line of a process that waits for another one. */
  what: string;
  /** Whether a cached record is the build wanted (e.g. its key); default: any. */
  accept?: (record: R) => boolean;
  /** The line that says a cached build is taken. */
  cachedLine: (record: R) => string;
  /** Runs only when there is something to build, before the lock (e.g. the tools' check). */
  prepare?: () => Promise<void>;
  /** Builds in `work`, leaving the finished files in `out` (an empty directory), and returns their record. */
  build: (work: string, out: string) => Promise<R>;
  log: (line: string) => void;
}

/**
 * The record of the build in `b.final`, built now if the cache has none: under the build's lock
 * (looking at the cache again once it has it: the process it waited for may have built it), in a
 * work directory emptied first (an interrupted build's leftovers are never trusted) and removed
 * after, the result renamed into place only when whole.
 */
export async function cachedBuild<R extends BuiltFiles>(b: CachedBuild<R>): Promise<R> {
  const fromCache = async () => {
    const record = await readBuildRecord<R>(b.final);
    if (record === undefined || !(b.accept?.(record) ?? true)) return undefined;
    b.log(b.cachedLine(record));
    return record;
  };
  const cached = await fromCache();
  if (cached) return cached;
  await b.prepare?.();
  await ensureCacheDir(dirname(b.final));
  return withBuildLock(`${b.final}.lock`, b.what, b.log, async () => {
    const built = await fromCache();
    if (built) return built;
    try {
      await rm(b.work, { recursive: true, force: true });
      const out = join(b.work, 'out');
      await mkdir(out, { recursive: true });
      const record = await b.build(b.work, out);
      await commitBuild(out, b.final, record);
      return record;
    } finally {
      await rm(b.work, { recursive: true, force: true });
    }
  });
}

/** Writes the record into the finished directory `out` and renames it to `final` (replacing a build not trusted). */
async function commitBuild(out: string, final: string, record: BuiltFiles): Promise<void> {
  await writeFile(join(out, BUILD_RECORD), JSON.stringify(record, null, 2) + '\n');
  await rm(final, { recursive: true, force: true });
  await rename(out, final);
}

/** How a build lock waits: how often it looks again, and how holders are judged (tests replace both). */
export interface BuildLockOptions {
  pollMs?: number;
  deps?: LockDeps;
}

/**
 * Runs `fn` holding the lock file `lockFile`; while another live process holds it, says once whom
 * it waits for (`what` names the build) and waits. A holder that died is taken over.
 */
export async function withBuildLock<T>(lockFile: string, what: string, log: (line: string) => void, fn: () => Promise<T>, opts: BuildLockOptions = {}): Promise<T> {
  return withFileLock(lockFile, what, fn, {
    ...opts,
    onWait: (h) => log(`  waiting for another hardway process (pid ${h.pid}, since ${h.started}) that is building ${what} from the same inputs`),
  });
}

/** Checks that each tool (command name -> Debian package) is installed; a PreconditionError names the packages missing for `what`. */
export async function requireTools(tools: Record<string, string>, what: string): Promise<void> {
  const missing: string[] = [];
  for (const [tool, pkg] of Object.entries(tools)) {
    if ((await tryLocal`sh -c ${`command -v ${tool}`}`).code !== 0) missing.push(pkg);
  }
  if (missing.length > 0) {
    throw new PreconditionError(`${what} needs Debian packages that are not installed: ${missing.join(', ')}`,
      `run "apt-get install -y ${missing.join(' ')}" (as root), or scripts/setup.sh, and try again`);
  }
}
