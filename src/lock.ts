// The project's lock: one hardway run that writes pki/ or touches machines per project directory at
// a time, held for the whole run. The lock file names the run holding it (pid, host, command); a
// lock whose process is gone (killed with SIGKILL, or the host rebooted) is taken over.
//
// Why it cannot be taken twice: the file appears with its whole content at once (a hard link of a
// written temp file, so nobody reads it half written), and only if no lock exists (link fails on an
// existing name). A stale lock is removed only by the run that holds a guard named after that
// stale lock's exact content, and only if the lock still has that content: two runs that both
// judged it dead cannot both remove it, so the second can never remove the first one's new lock.
import { closeSync, linkSync, lstatSync, openSync, readFileSync, rmSync, unlinkSync, writeFileSync, writeSync } from 'node:fs';
import { createHash, randomBytes } from 'node:crypto';
import { basename, join } from 'node:path';
import { hostname } from 'node:os';
import { FailureError, InputError } from './errors.ts';
import { displayPath, namingPath, pathError } from './input-file.ts';
import { describeEntry } from './output-file.ts';

/** The lock file's name inside the project directory. */
export const LOCK_FILE = '.hardway.lock';

/** What a lock file says about the run holding it. */
export interface LockInfo {
  pid: number;
  host: string;
  command: string;
  started: string;
  /** The kernel's boot id and the process's start time: a pid reused after the run died is not the run. */
  boot?: string;
  startTicks?: string;
}

/** A held lock; release() removes the file if it is still ours. */
export interface RunLock {
  readonly path: string;
  release(): void;
}

/** How a lock judges runs: this process's pid, and whether a holder still runs (tests replace both). */
export interface LockDeps {
  pid: number;
  alive: (holder: LockInfo) => boolean;
}

/** True if a process with this pid exists on this host (EPERM means it exists but is not ours). */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** True if the run a lock names still runs on this host: same boot, the pid exists and started when it did. */
export function holderAlive(holder: LockInfo): boolean {
  if (holder.boot !== undefined && bootId() !== undefined && holder.boot !== bootId()) return false;
  if (!pidAlive(holder.pid)) return false;
  return holder.startTicks === undefined || startTicks(holder.pid) === undefined || startTicks(holder.pid) === holder.startTicks;
}

/** Takes the lock file `path` (of a project, or of a build in hardway's cache) for `command`, or returns the live holder. */
export function tryLockFile(path: string, command: string, deps: LockDeps = { pid: process.pid, alive: holderAlive }): RunLock | { holder: LockInfo } {
  const info: LockInfo = {
    pid: deps.pid, host: hostname(), command, started: new Date().toISOString(),
    ...optional('boot', bootId()), ...optional('startTicks', startTicks(deps.pid)),
  };
  const text = JSON.stringify(info) + '\n';
  const holder = claim(path, text, info.host, deps, 0);
  return holder === undefined ? lockHandle(path, text) : { holder };
}

/** Takes the project's lock or throws FailureError naming the pid and command holding it. */
export function acquireRunLock(projectDir: string, command: string, deps: LockDeps = { pid: process.pid, alive: holderAlive }): RunLock {
  const path = join(projectDir, LOCK_FILE);
  const taken = tryLockFile(path, command, deps);
  if (!('holder' in taken)) return taken;
  const holder = taken.holder;
  throw new FailureError(
    `another hardway run is using this project: pid ${holder.pid} on ${holder.host} ("hardway ${holder.command}", started ${holder.started})`,
    `wait for it to finish; if that process is gone from ${holder.host}, remove ${path}`,
  );
}

/**
 * Runs `fn` holding the lock file `path` (a build in hardway's cache, the lab's host settings),
 * waiting while another live process holds it: `onWait` hears once whom for. A holder that died is
 * taken over; the lock is released however `fn` ends.
 */
export async function withFileLock<T>(path: string, command: string, fn: () => Promise<T> | T, opts: { onWait?: (holder: LockInfo) => void; pollMs?: number; deps?: LockDeps } = {}): Promise<T> {
  let said = false;
  for (;;) {
    const taken = tryLockFile(path, command, opts.deps ?? { pid: process.pid, alive: holderAlive });
    if (!('holder' in taken)) {
      try {
        return await fn();
      } finally {
        taken.release();
      }
    }
    if (!said) opts.onWait?.(taken.holder);
    said = true;
    await new Promise((r) => setTimeout(r, opts.pollMs ?? 1000));
  }
}

/** Runs `fn` holding the project's lock, and releases it however `fn` ends. */
export async function withRunLock<T>(projectDir: string, command: string, fn: () => Promise<T>): Promise<T> {
  const lock = acquireRunLock(projectDir, command);
  try {
    return await fn();
  } finally {
    lock.release();
  }
}

const MAX_TRIES = 50;

/** Makes `path` hold `text` if it is free or its holder is gone; otherwise returns the live holder. */
function claim(path: string, text: string, host: string, deps: LockDeps, depth: number): LockInfo | undefined {
  for (let attempt = 0; attempt < MAX_TRIES; attempt++) {
    if (createExclusive(path, text)) return undefined;
    notHardwaysLock(path);
    const seen = readText(path);
    if (seen === undefined) continue; // released in between: try again
    const holder = parse(seen);
    if (holder !== undefined && !(holder.host === host && !deps.alive(holder))) return holder;
    if (holder === undefined && attempt === 0) {
      // Unreadable: not written by this version; an older one may be between creating and writing it.
      pause(100);
      continue;
    }
    if (depth >= 3) break;
    const guard = `${path}.${createHash('sha256').update(seen).digest('hex').slice(0, 16)}.takeover`;
    if (claim(guard, text, host, deps, depth + 1) !== undefined) {
      pause(10); // another run is taking this stale lock over right now: look again
      continue;
    }
    try {
      if (readText(path) === seen) unlinkSync(path);
    } finally {
      rmSync(guard, { force: true });
    }
  }
  throw new FailureError(`could not take the lock ${path}`, 'other hardway runs are starting at the same time; try again');
}

/**
 * Refuses what hardway never makes at the lock's place: a link (even to nothing, which would look
 * like a lock released a moment ago, forever) or anything but a file. Named, with what to do.
 */
function notHardwaysLock(path: string): void {
  let st;
  try {
    st = lstatSync(path);
  } catch {
    return; // gone: released in between
  }
  if (st.isFile()) return;
  // The file named is this lock's own (a project's .hardway.lock, a build's <build>.lock in the cache).
  throw new InputError(`${describeEntry(path, st)}, not a lock hardway made (it makes ${basename(path)} as a file of its own)`,
    `no hardway run holds it: remove it (rm ${displayPath(path)}), then run hardway again`);
}

/** Creates `path` holding `text` in one step, unless it exists. */
function createExclusive(path: string, text: string): boolean {
  const tmp = `${path}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    // A write that fails (no space, a read-only file system) leaves no temp file behind.
    namingPath(displayPath(path), () => writeFileSync(tmp, text, { mode: 0o600, flag: 'wx' }));
    linkSync(tmp, path);
    return true;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return false;
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP' && code !== 'ENOSYS') throw pathError(e, displayPath(path)) ?? e;
    return createWithOpen(path, text); // a file system without hard links
  } finally {
    rmSync(tmp, { force: true });
  }
}

function createWithOpen(path: string, text: string): boolean {
  let fd: number;
  try {
    fd = openSync(path, 'wx', 0o600);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw pathError(e, displayPath(path)) ?? e;
  }
  try {
    namingPath(displayPath(path), () => writeSync(fd, text));
  } catch (e) {
    rmSync(path, { force: true }); // half a lock would look like another run's forever
    throw e;
  } finally {
    closeSync(fd);
  }
  return true;
}

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
}

function parse(text: string): LockInfo | undefined {
  try {
    const parsed = JSON.parse(text) as LockInfo;
    return typeof parsed.pid === 'number' && typeof parsed.host === 'string' ? parsed : undefined;
  } catch {
    return undefined;
  }
}

function lockHandle(path: string, text: string): RunLock {
  let held = true;
  return {
    path,
    release() {
      if (!held) return;
      held = false;
      if (readText(path) === text) rmSync(path, { force: true });
    },
  };
}

function pause(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

function optional<K extends string>(key: K, value: string | undefined): Partial<Record<K, string>> {
  return value === undefined ? {} : ({ [key]: value } as Record<K, string>);
}

function bootId(): string | undefined {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
  } catch {
    return undefined;
  }
}

/** Field 22 of /proc/<pid>/stat: when the process started, in clock ticks after boot. */
function startTicks(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}
