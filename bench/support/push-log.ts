// Reads a hardway run log (logs/<time>-up-<pid>.log) for what the run pushed: every completed
// upload per machine (path, mode, size, local source file if any), the systemd units among them,
// and how long each step took. The bench's manual baseline pushes exactly these files.
import { statSync } from 'node:fs';

/** One file hardway uploaded to a machine. */
export interface PushedFile {
  host: string;
  /** Absolute path on the machine. */
  path: string;
  mode: number;
  bytes: number;
  /** The local file it was streamed from (binaries from downloads/); absent for rendered content. */
  localFile?: string;
}

// `<iso> <host>: upload <path> mode 0644 owner root:root (805 bytes)` or `(... local file /x/y)`.
const UPLOAD = /^\S+Z (\S+): upload (\/\S+) mode (0[0-7]+) owner \S+ \((?:(\d+) bytes|local file (.+))\)$/;
const UPLOADED = /^\S+Z (\S+): uploaded (\/\S+) in \d+ ms$/;
const STAMP = /^(\d{4}-\d\d-\d\dT\S+Z) /;

/** Every upload that completed, one entry per machine and path (the last upload of a path wins). */
export function pushedFiles(logText: string): PushedFile[] {
  const started = new Map<string, PushedFile>();
  const done = new Map<string, PushedFile>();
  for (const line of logText.split('\n')) {
    const up = UPLOAD.exec(line);
    if (up) {
      const [, host, path, mode, bytes, localFile] = up as unknown as [string, string, string, string, string?, string?];
      const size = localFile !== undefined ? statSync(localFile).size : Number(bytes);
      started.set(`${host} ${path}`, { host, path, mode: parseInt(mode, 8), bytes: size, ...(localFile ? { localFile } : {}) });
      continue;
    }
    const ok = UPLOADED.exec(line);
    if (ok) {
      const key = `${ok[1]} ${ok[2]}`;
      const f = started.get(key);
      if (f) done.set(key, f);
    }
  }
  return [...done.values()];
}

/** The services whose unit files are among the pushed files of one machine. */
export function pushedServices(files: PushedFile[]): string[] {
  return files.flatMap((f) => /^\/etc\/systemd\/system\/([^/]+)\.service$/.exec(f.path)?.[1] ?? []);
}

/** Wall time of each step, as the engine logged it when the step ended (steps in lanes overlap). */
export function stepSeconds(logText: string): { step: string; seconds: number }[] {
  return [...logText.matchAll(/^\S+Z step ([a-z0-9-]+) finished in (\d+) ms$/gm)].map((m) => ({ step: m[1]!, seconds: Number(m[2]) / 1000 }));
}

/** Seconds between the log's first and last line: the remote part of the run. */
export function loggedSeconds(logText: string): number {
  const stamps = logText.split('\n').flatMap((l) => STAMP.exec(l)?.[1] ?? []).map((s) => Date.parse(s));
  return stamps.length ? (stamps.at(-1)! - stamps[0]!) / 1000 : 0;
}

/**
 * Seconds the run spent starting services and waiting for them to become active (`{ systemctl
 * start|restart S || ... } && <wait>`), counted per step on the slowest machine: the part of the wall time
 * that no faster copying can remove.
 */
export function serviceWaitSeconds(logText: string): number {
  const perStep = new Map<string, Map<string, number>>();
  const pending = new Map<string, boolean>();
  // Steps of different lanes interleave in the log: each machine's current step is the one it planned last.
  const stepOf = new Map<string, string>();
  for (const line of logText.split('\n')) {
    const planned = /^\S+Z (\S+): ([a-z0-9-]+): plan has/.exec(line);
    if (planned) stepOf.set(planned[1]!, planned[2]!);
    const cmd = /^\S+Z (\S+): \$ (.*)$/.exec(line);
    if (cmd) pending.set(cmd[1]!, /^\{ systemctl (re)?start \S+ \|\|.*&& for i in/.test(cmd[2]!));
    const exit = /^\S+Z (\S+): exit \d+ after (\d+) ms/.exec(line);
    if (exit && pending.get(exit[1]!)) {
      const step = stepOf.get(exit[1]!) ?? '';
      const hosts = perStep.get(step) ?? new Map<string, number>();
      hosts.set(exit[1]!, (hosts.get(exit[1]!) ?? 0) + Number(exit[2]) / 1000);
      perStep.set(step, hosts);
      pending.delete(exit[1]!);
    }
  }
  return [...perStep.values()].reduce((sum, hosts) => sum + Math.max(...hosts.values()), 0);
}
