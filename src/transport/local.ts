// The same Transport over child_process on this machine: for `pin-hosts --local` on the jumpbox
// and for tests. Commands run with /bin/sh -c; uploads are temp file + rename like the SSH ones.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open, rename, unlink, type FileHandle } from 'node:fs/promises';
import { CommandError } from '../errors.ts';
import { isCommand, type Command } from '../shell.ts';
import { CommandTimeoutError } from './errors.ts';
import type { ExecOptions, ExecResult, Transport, UploadOptions, UploadSource } from './types.ts';
import { assertTargetPath, parseOwnerIds, prepareCommand, tempPrefix } from './upload.ts';

/** Options of the local transport. */
export interface LocalTransportOptions {
  /** How errors name this machine (default `local`). */
  machine?: string;
  /** Default per-command time limit (default 10 min). */
  commandTimeoutMs?: number;
}

/** A Transport that runs everything on this machine. */
export class LocalTransport implements Transport {
  readonly machine: string;
  private readonly commandTimeoutMs: number;

  constructor(opts: LocalTransportOptions = {}) {
    this.machine = opts.machine ?? 'local';
    this.commandTimeoutMs = opts.commandTimeoutMs ?? 600_000;
  }

  /** Runs a command built with `sh` under /bin/sh -c; a non-zero exit code is returned, not thrown. */
  exec(cmd: Command, opts: ExecOptions = {}): Promise<ExecResult> {
    if (!isCommand(cmd)) return Promise.reject(new TypeError(`${this.machine}: exec takes a Command built with sh\`\`, got ${typeof cmd}`));
    const timeoutMs = opts.timeoutMs ?? this.commandTimeoutMs;
    return new Promise((resolve, reject) => {
      // Its own process group, so a timeout kills the command's children too.
      const child = spawn('/bin/sh', ['-c', cmd.text], { detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
      const out: Buffer[] = [];
      const errOut: Buffer[] = [];
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        try {
          process.kill(-child.pid!, 'SIGKILL');
        } catch {
          /* already gone */
        }
        reject(new CommandTimeoutError(this.machine, cmd.text, timeoutMs, Buffer.concat(errOut).toString('utf8')));
      }, timeoutMs);
      child.stdout.on('data', (d: Buffer) => out.push(d));
      child.stderr.on('data', (d: Buffer) => errOut.push(d));
      child.stdin.on('error', () => undefined); // a command that ignores stdin may close it early
      child.on('error', (e) => {
        clearTimeout(timer);
        reject(new CommandError(this.machine, cmd.text, null, e.message));
      });
      child.on('close', (code, signal) => {
        clearTimeout(timer);
        if (timedOut) return;
        const status = code ?? 128 + (signal ? (SIGNAL_NUMBERS[signal] ?? 127) : 127);
        resolve({ code: status, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(errOut).toString('utf8') });
      });
      child.stdin.end(opts.stdin ?? undefined);
    });
  }

  /** Writes a temp file beside the target (0600), sets owner and mode, fsyncs, renames it over the target. */
  async upload(path: string, source: UploadSource, opts: UploadOptions): Promise<void> {
    assertTargetPath(path);
    const prep = prepareCommand(path, opts.owner);
    const r = await this.exec(prep);
    if (r.code !== 0) throw new CommandError(this.machine, prep.text, r.code, r.stderr);
    const [uid, gid] = parseOwnerIds(r.stdout, this.machine, prep, opts.owner);
    const tmp = tempPrefix(path) + randomBytes(6).toString('hex');
    const fh = await open(tmp, 'wx', 0o600);
    try {
      if ('data' in source) await fh.writeFile(source.data);
      else for await (const chunk of createReadStream(source.file, { highWaterMark: 1024 * 1024 })) await writeFully(fh, chunk as Buffer);
      await fh.sync();
      await fh.chown(uid, gid);
      await fh.chmod(opts.mode);
      await fh.close();
      await rename(tmp, path);
    } catch (e) {
      await fh.close().catch(() => undefined);
      await unlink(tmp).catch(() => undefined);
      throw e;
    }
  }

  /** Nothing to close. */
  async close(): Promise<void> {}
}

async function writeFully(fh: FileHandle, chunk: Buffer): Promise<void> {
  for (let off = 0; off < chunk.length; ) off += (await fh.write(chunk, off)).bytesWritten;
}

const SIGNAL_NUMBERS: Record<string, number> = { SIGHUP: 1, SIGINT: 2, SIGKILL: 9, SIGSEGV: 11, SIGPIPE: 13, SIGTERM: 15 };
