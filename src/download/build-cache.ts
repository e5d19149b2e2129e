// Builds kept in hardway's cache (the Kubernetes server binaries, the CoreDNS binary): a finished
// build is a directory holding its files and build.json, made in a work directory and renamed into
// place in one step, build.json last, so a directory with a build.json is a whole build. One build
// of the same inputs runs at a time across processes: the others wait for it (the project lock's
// race-free lock file, src/engine/lock.ts) and then take its result from the cache.
import { readFileSync } from 'node:fs';
import { rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { holderAlive, tryLockFile, type LockDeps } from '../engine/lock.ts';
import { PreconditionError } from '../errors.ts';
import { tryLocal } from '../transport/local.ts';

/** The part of every build record this module checks: each built file's SHA-256 and size. */
export interface BuiltFiles {
  files: Record<string, { sha256: string; size: number }>;
}

/** Go's build cache inside hardway's cache root, shared by every Go build (content-addressed, so safe to share). */
export const GO_BUILD_CACHE = 'go-build-cache';

/** The name of the record in a build directory. */
export const BUILD_RECORD = 'build.json';

/** The record of a finished build in `dir`, or undefined when there is none or a file changed size since. */
export async function readBuildRecord<T extends BuiltFiles>(dir: string): Promise<T | undefined> {
  try {
    const record = JSON.parse(readFileSync(join(dir, BUILD_RECORD), 'utf8')) as T;
    // A file changed or removed since (by hand, or disk trouble) means the build is not trusted.
    for (const [name, f] of Object.entries(record.files)) {
      if ((await stat(join(dir, name))).size !== f.size) return undefined;
    }
    return record;
  } catch {
    return undefined;
  }
}

/** Writes the record into the finished directory `out` and renames it to `final` (replacing a build not trusted). */
export async function commitBuild(out: string, final: string, record: BuiltFiles): Promise<void> {
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
  let said = false;
  for (;;) {
    const taken = tryLockFile(lockFile, what, opts.deps ?? { pid: process.pid, alive: holderAlive });
    if (!('holder' in taken)) {
      try {
        return await fn();
      } finally {
        taken.release();
      }
    }
    if (!said) {
      const h = taken.holder;
      log(`  waiting for another hardway process (pid ${h.pid}, since ${h.started}) that is building ${what} from the same inputs`);
      said = true;
    }
    await new Promise((r) => setTimeout(r, opts.pollMs ?? 1000));
  }
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
