// Shared by the safety tests (issue 24): a project whose machines are reached on a loopback port
// nothing listens on, real file systems that are full or read-only (a tmpfs and a bind mount made
// and removed by the test), and the checks every refusal must pass.
import { execFileSync } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, truncateSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { expect } from 'vitest';
import type { CliRun } from '../helpers/cli.ts';
import { makeProject } from './certs.helpers.ts';
import { escapeRegExp } from '../fixtures/fake-transport.ts';

/**
 * A project (machines.txt, cluster.yaml) whose machines are reached on 127.0.0.9, port 9, where
 * nothing listens: a command that connects fails at once, and no packet leaves this host.
 */
export function loopbackProject(opts: { machines?: string; cluster?: string } = {}): { dir: string; machines: string } {
  const p = makeProject({ ...opts, cluster: `${opts.cluster ?? 'keyAlgorithm: ecdsa-p256\n'}ssh:\n  configFile: ssh_config\n` });
  writeFileSync(join(p.dir, 'ssh_config'), 'Host *\n  HostName 127.0.0.9\n  Port 9\n');
  return p;
}

/** An expected refusal or failure: that exit code, one `error:` line (then hints), no stack trace. */
export function failedCleanly(run: CliRun, code: 1 | 2, text?: string | RegExp): void {
  expect(run.code, run.stderr).toBe(code);
  expect(run.stderr).toMatch(/^error: /);
  expect(run.stderr).not.toMatch(/internal error|\n\s+at /);
  if (text !== undefined) expect(run.stderr.split('\n')[0]).toMatch(typeof text === 'string' ? new RegExp(escapeRegExp(text)) : text);
}


/** Every entry under `dir` but directories (links not followed), relative to it, sorted. */
export function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => !e.isDirectory())
    .map((e) => relative(dir, join(e.parentPath, e.name))).sort();
}

/** A directory outside the project: what a link points at, to check nothing lands there. */
export function outside(): string {
  return mkdtempSync(join(tmpdir(), 'hw-outside-'));
}

/** A mount made for one test and removed after it, however it ends. */
export interface Mount {
  dir: string;
  unmount(): void;
}

/** A tmpfs of `sizeKb` KiB at a fresh directory. */
export function tmpfs(sizeKb: number): Mount {
  const dir = mkdtempSync(join(tmpdir(), 'hw-tmpfs-'));
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeKb}k,mode=0755`, 'tmpfs', dir]);
  return { dir, unmount: () => unmount(dir) };
}

/** `source` seen read-only at a fresh directory (a read-only bind mount). */
export function readOnlyView(source: string): Mount {
  const dir = mkdtempSync(join(tmpdir(), 'hw-ro-'));
  execFileSync('mount', ['--bind', source, dir]);
  try {
    execFileSync('mount', ['-o', 'remount,bind,ro', dir]);
  } catch (e) {
    unmount(dir);
    throw e;
  }
  return { dir, unmount: () => unmount(dir) };
}

function unmount(dir: string): void {
  execFileSync('umount', [dir]);
  rmSync(dir, { recursive: true, force: true });
}

/** Fills the file system of `dir` (a file `filler`), then frees `pages` 4 KiB pages of it again. */
export function fillUp(dir: string, pages: number): void {
  const file = join(dir, 'filler');
  const fd = openSync(file, 'w');
  const chunk = Buffer.alloc(4096, 1);
  let size = 0;
  try {
    for (;;) size += writeSync(fd, chunk);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOSPC') throw e;
  } finally {
    closeSync(fd);
  }
  truncateSync(file, Math.max(0, size - pages * 4096));
}

/** Makes `dir/rel` a directory (and its parents). */
export function mkdirs(dir: string, rel: string): string {
  const path = join(dir, rel);
  mkdirSync(path, { recursive: true });
  return path;
}

/** Rewrites a PEM certificate's public-key algorithm (id-ecPublicKey) into an OID nobody knows. */
export function breakKeyAlgorithm(file: string): void {
  const pem = readFileSync(file, 'utf8');
  const der = Buffer.from(pem.replace(/-----[^-]+-----/g, '').replace(/\s+/g, ''), 'base64');
  const at = der.indexOf(Buffer.from('06072a8648ce3d0201', 'hex'));
  expect(at).toBeGreaterThan(0);
  der[at + 8] = 0x07; // 1.2.840.10045.2.7
  writeFileSync(file, `-----BEGIN CERTIFICATE-----\n${der.toString('base64').match(/.{1,64}/g)!.join('\n')}\n-----END CERTIFICATE-----\n`);
}
