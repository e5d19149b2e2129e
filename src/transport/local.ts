// Everything hardway runs on this machine, in one place: the local Transport (the jumpbox as a host:
// `pin-hosts --local`, tests) and the local commands of the lab, multipass, doctor's kubectl,
// download and the long builds (ip, mount, debootstrap, tar, apt-get, make, go...). Every command
// is built with `sh` (one quoting style, the one the machines' commands use too) and runs under
// /bin/sh -c; uploads are temp file + rename like the SSH ones. (zx, which the project once
// carried, quotes for bash with $'...' and runs bash: a second quoting style and shell.)
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createReadStream, readFileSync } from 'node:fs';
import { open, rename, unlink, type FileHandle } from 'node:fs/promises';
import { CommandError } from '../errors.ts';
import { isCommand, sh, type Command } from '../shell.ts';
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
    return runCommand(cmd, { machine: this.machine, stdin: opts.stdin, timeoutMs: opts.timeoutMs ?? this.commandTimeoutMs });
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

/** How one local command runs. */
export interface RunOptions {
  /** How errors name this machine (default `local`). */
  machine?: string;
  stdin?: string | Buffer;
  cwd?: string;
  /** The command's environment (default this process's). */
  env?: NodeJS.ProcessEnv;
  /** Kill the command (and its children: it gets a process group of its own) after this long; none by default. */
  timeoutMs?: number;
  /** Sees stdout as it comes (progress of a long command); it is collected all the same. */
  onStdout?: (chunk: Buffer) => void;
  /** Sees stderr as it comes; it is collected all the same. */
  onStderr?: (chunk: Buffer) => void;
  /** Kills the command (and what it started) when aborted; the promise then rejects with the signal's reason. */
  signal?: AbortSignal;
}

// Ctrl-C, a hang-up or a kill reach hardway once for the whole process, so every local command
// running then (or started after) is aborted together: src/cli/interrupt.ts calls abortLocalCommands.
const interrupted = new AbortController();

/** Aborts every local command running now or started later (kills each one and what it started): hardway is being interrupted. */
export function abortLocalCommands(reason: string): void {
  interrupted.abort(new Error(reason));
}

/** The processes `pid` started, and theirs (Linux /proc; none where it cannot be read). */
function descendantsOf(pid: number): number[] {
  let children: number[] = [];
  try {
    children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    /* gone, or no /proc */
  }
  return children.flatMap((c) => [c, ...descendantsOf(c)]);
}

function kill(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    /* already gone */
  }
}

/**
 * Runs a command under /bin/sh -c and resolves with its exit code and output whatever the code. A
 * command with a time limit gets its own process group, so the timeout kills its children too; one
 * without (a lab boot, a Kubernetes build) stays in ours, so Ctrl-C reaches it.
 */
export function runCommand(cmd: Command, opts: RunOptions = {}): Promise<ExecResult> {
  const machine = opts.machine ?? 'local';
  const abort = opts.signal ? AbortSignal.any([interrupted.signal, opts.signal]) : interrupted.signal;
  if (abort.aborted) return Promise.reject(abort.reason as Error);
  return new Promise((resolve, reject) => {
    const detached = opts.timeoutMs !== undefined;
    const child = spawn('/bin/sh', ['-c', cmd.text], { detached, cwd: opts.cwd, env: opts.env, stdio: ['pipe', 'pipe', 'pipe'] });
    let aborted = false;
    // A command in a group of its own goes with its group; one in ours, with each process it started
    // (found before the shell goes, or they would be orphans no one can name).
    const onAbort = () => {
      aborted = true;
      clearTimeout(timer);
      if (detached) kill(-child.pid!, 'SIGKILL');
      else for (const pid of [...descendantsOf(child.pid!).reverse(), child.pid!]) kill(pid, 'SIGKILL');
      reject(abort.reason as Error);
    };
    abort.addEventListener('abort', onAbort, { once: true });
    const out: Buffer[] = [];
    const errOut: Buffer[] = [];
    let timedOut = false;
    const timer = opts.timeoutMs === undefined ? undefined : setTimeout(() => {
      timedOut = true;
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        /* already gone */
      }
      reject(new CommandTimeoutError(machine, cmd.text, opts.timeoutMs!, Buffer.concat(errOut).toString('utf8')));
    }, opts.timeoutMs);
    child.stdout.on('data', (d: Buffer) => {
      out.push(d);
      opts.onStdout?.(d);
    });
    child.stderr.on('data', (d: Buffer) => {
      errOut.push(d);
      opts.onStderr?.(d);
    });
    child.stdin.on('error', () => undefined); // a command that ignores stdin may close it early
    child.on('error', (e) => {
      clearTimeout(timer);
      abort.removeEventListener('abort', onAbort);
      reject(new CommandError(machine, cmd.text, null, e.message));
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      abort.removeEventListener('abort', onAbort);
      if (timedOut || aborted) return;
      const status = code ?? 128 + (signal ? (SIGNAL_NUMBERS[signal] ?? 127) : 127);
      resolve({ code: status, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(errOut).toString('utf8') });
    });
    child.stdin.end(opts.stdin ?? undefined);
  });
}

type Interpolated = Parameters<typeof sh>[1];

/** Runs a local command (a `sh` template) and returns its result whatever the exit code. */
export function tryLocal(strings: TemplateStringsArray, ...values: Interpolated[]): Promise<ExecResult> {
  return runCommand(sh(strings, ...values));
}

/** Runs a local command (a `sh` template); throws CommandError('local', command, code, stderr) when it fails; returns stdout. */
export async function local(strings: TemplateStringsArray, ...values: Interpolated[]): Promise<string> {
  return (await mustRun(sh(strings, ...values))).stdout;
}

/** Runs `cmd args...` (each quoted), in `cwd` if given; throws CommandError('local', ...) on a non-zero exit. */
export function runLocal(cmd: string, args: readonly string[], opts: { cwd?: string } = {}): Promise<ExecResult> {
  return mustRun(sh`${cmd} ${args}`, opts.cwd);
}

async function mustRun(cmd: Command, cwd?: string): Promise<ExecResult> {
  const r = await runCommand(cmd, { cwd });
  if (r.code !== 0) throw new CommandError('local', cmd.text, r.code, r.stderr, r.stdout);
  return r;
}

async function writeFully(fh: FileHandle, chunk: Buffer): Promise<void> {
  for (let off = 0; off < chunk.length; ) off += (await fh.write(chunk, off)).bytesWritten;
}

const SIGNAL_NUMBERS: Record<string, number> = { SIGHUP: 1, SIGINT: 2, SIGKILL: 9, SIGSEGV: 11, SIGPIPE: 13, SIGTERM: 15 };
