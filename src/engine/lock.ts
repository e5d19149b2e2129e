// The run lock: one hardway run per project directory at a time. The lock file holds the pid of
// the run; a lock whose pid is dead (a run killed with SIGKILL) is taken over.
import { openSync, writeSync, closeSync, readFileSync, unlinkSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { hostname } from 'node:os';
import { FailureError } from '../errors.ts';

/** The lock file's name inside the project directory. */
export const LOCK_FILE = '.hardway.lock';

/** What a lock file says about the run holding it. */
export interface LockInfo {
  pid: number;
  host: string;
  command: string;
  started: string;
}

/** A held lock; release() removes the file if it is still ours. */
export interface RunLock {
  readonly path: string;
  release(): void;
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

/** Takes the project's lock or throws FailureError naming the pid and command holding it. */
export function acquireRunLock(projectDir: string, command: string, deps = { pid: process.pid, alive: pidAlive }): RunLock {
  const path = join(projectDir, LOCK_FILE);
  const info: LockInfo = { pid: deps.pid, host: hostname(), command, started: new Date().toISOString() };
  const text = JSON.stringify(info) + '\n';
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = openSync(path, 'wx', 0o600);
      writeSync(fd, text);
      closeSync(fd);
      return lockHandle(path, deps.pid);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
    const holder = readLock(path);
    if (holder === undefined && attempt === 0) {
      // Unreadable: a starting run may be between creating and writing it. Look again shortly.
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 100);
      continue;
    }
    if (holder === undefined || (holder.host === info.host && !deps.alive(holder.pid))) {
      // Stale: its run died without cleaning up. Replace it atomically, then re-check that we won.
      const tmp = `${path}.${deps.pid}.tmp`;
      const fd = openSync(tmp, 'w', 0o600);
      writeSync(fd, text);
      closeSync(fd);
      renameSync(tmp, path);
      if (readLock(path)?.pid === deps.pid) return lockHandle(path, deps.pid);
      continue;
    }
    throw new FailureError(
      `another hardway run is using this project: pid ${holder.pid} on ${holder.host} ("hardway ${holder.command}", started ${holder.started})`,
      `wait for it to finish; if that process is gone from ${holder.host}, remove ${path}`,
    );
  }
  throw new FailureError(`could not take the run lock ${path}`, 'another hardway run is starting at the same time; try again');
}

function readLock(path: string): LockInfo | undefined {
  try {
    const parsed = JSON.parse(readFileSync(path, 'utf8')) as LockInfo;
    return typeof parsed.pid === 'number' ? parsed : undefined;
  } catch {
    return undefined;
  }
}

function lockHandle(path: string, pid: number): RunLock {
  let held = true;
  return {
    path,
    release() {
      if (!held) return;
      held = false;
      if (readLock(path)?.pid === pid) {
        try {
          unlinkSync(path);
        } catch {
          // already gone: nothing to release
        }
      }
    },
  };
}
