// The per-run log file under <project>/logs/ (dir 0700, file 0600): every remote command with its
// full output, every upload (never secret contents), every line shown to the user; all redacted.
import { mkdirSync, openSync, writeSync, closeSync, chmodSync } from 'node:fs';
import { join } from 'node:path';
import type { Redactor } from '../ui/redact.ts';

/** An append-only, redacting log file for one run. */
export interface RunLog {
  readonly path: string;
  /** Appends a line (or block) prefixed with a timestamp and, if given, the host's name. */
  write(text: string, host?: string): void;
  close(): void;
}

/** Opens `<dir>/logs/<time>-<command>-<pid>.log` for this run. */
export function openRunLog(projectDir: string, command: string, redactor: Redactor, now = new Date(), pid = process.pid): RunLog {
  const dir = join(projectDir, 'logs');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  const stamp = now.toISOString().replace(/[:.]/g, '-');
  const path = join(dir, `${stamp}-${command.replace(/[^a-z0-9-]/gi, '_')}-${pid}.log`);
  const fd = openSync(path, 'a', 0o600);
  chmodSync(path, 0o600);
  let open = true;
  return {
    path,
    write(text, host) {
      if (!open) return;
      const prefix = `${new Date().toISOString()} ${host ? host + ': ' : ''}`;
      const body = redactor.redact(text).replace(/\n/g, `\n${' '.repeat(prefix.length)}`);
      writeSync(fd, prefix + body + '\n');
    },
    close() {
      if (open) closeSync(fd);
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
