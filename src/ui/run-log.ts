// The per-run log file under <project>/logs/ (dir 0700, file 0600): every remote command with its
// full output, every upload (never secret contents), every line shown to the user; all redacted.
// logs/ is a directory of hardway's own: a link there is refused, never followed (nor chmod-ed).
import { closeSync, constants, fchmodSync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { displayPath, namingPath } from '../input-file.ts';
import { dirsInside, narrowModeNoFollow } from '../output-file.ts';
import type { Redactor } from './redact.ts';

/** The project's directory of run logs, beside machines.txt. */
export const LOGS_DIR = 'logs';

/** An append-only, redacting log file for one run. */
export interface RunLog {
  readonly path: string;
  /** Appends a line (or block) prefixed with a timestamp and, if given, the host's name. */
  write(text: string, host?: string): void;
  close(): void;
}

/** Opens `<dir>/logs/<time>-<command>-<pid>.log` for this run. */
export function openRunLog(projectDir: string, command: string, redactor: Redactor, now = new Date(), pid = process.pid): RunLog {
  const hint = `hardway keeps its run logs in ${LOGS_DIR}/ beside machines.txt, a directory of its own: move what is there away (hardway makes it)`;
  const dir = dirsInside({ dir: projectDir, dirMode: 0o700, hint }, LOGS_DIR, true);
  narrowModeNoFollow(dir, 0o700, hint);
  const stamp = now.toISOString().replace(/[:.]/g, '-');
  const path = join(dir, `${stamp}-${command.replace(/[^a-z0-9-]/gi, '_')}-${pid}.log`);
  const fd = namingPath(displayPath(path), () => openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_APPEND | constants.O_NOFOLLOW, 0o600));
  fchmodSync(fd, 0o600);
  const shown = displayPath(path);
  // Lines are written together at the end of the event loop's turn (a no-op `up` at 1+32 logs some
  // 8,000 entries, most of them in a few turns): one write per turn, not one per line. Whatever is
  // pending is written at close and when the process exits; only a SIGKILL loses a turn's lines.
  let open = true;
  let pending: string[] = [];
  let scheduled = false;
  // A write that failed in a later turn (a full disk) is thrown by the next write(), to its caller,
  // as it was when each entry was written at once; not from a timer, which would end the process.
  let failed: unknown;
  const flush = () => {
    scheduled = false;
    if (!open || pending.length === 0) return;
    const text = pending.join('');
    pending = [];
    try {
      namingPath(shown, () => writeSync(fd, text));
    } catch (e) {
      failed ??= e;
    }
  };
  process.on('exit', flush);
  return {
    path,
    write(text, host) {
      if (!open) return;
      if (failed !== undefined) {
        const e = failed;
        failed = undefined;
        throw e;
      }
      const prefix = `${new Date().toISOString()} ${host ? host + ': ' : ''}`;
      const body = redactor.redact(text).replace(/\n/g, `\n${' '.repeat(prefix.length)}`);
      pending.push(prefix + body + '\n');
      if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
    },
    close() {
      if (!open) return;
      flush();
      process.off('exit', flush);
      closeSync(fd);
      open = false;
    },
  };
}

/** A RunLog that keeps lines in memory (tests and runs without a project directory). */
export function memoryRunLog(redactor: Redactor): RunLog & { lines: string[] } {
  const lines: string[] = [];
  return {
    path: '(memory)',
    lines,
    write: (text, host) => void lines.push(redactor.redact(`${host ? host + ': ' : ''}${text}`)),
    close: () => {},
  };
}
