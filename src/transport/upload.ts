// Atomic uploads over SFTP: bytes go to a temp file beside the target (created 0600), which gets
// its owner and mode, is fsynced, and only then renamed over the target. A crash leaves at most a
// temp file, which the next run's first upload into the same directory removes. Sources stream
// from disk. A login raised with sudo writes the same temp file as root instead (upload-raised.ts).
import { randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { posix } from 'node:path';
import type { Readable } from 'node:stream';
import type { SFTPWrapper } from 'ssh2';
import { uploadRaised } from './upload-raised.ts';
import { CommandError } from '../errors.ts';
import { sh, type Command } from '../shell.ts';
import { DEFAULT_OWNER, type ExecResult, type UploadOptions, type UploadSource } from './types.ts';

/** What an upload needs from its transport, which may remember the first two per connection. */
export interface UploadChannels {
  machine: string;
  exec(cmd: Command): Promise<ExecResult>;
  /** Runs prepareDirCommand(dir): the directory exists and holds no stale temp file. */
  prepareDir(dir: string): Promise<void>;
  /** The numeric uid and gid of an owner `user:group` on the machine (ownerCommand + parseOwnerIds). */
  ownerIds(owner: string): Promise<[number, number]>;
  /** Runs fn with an SFTP session; `gone` rejects (ConnectionLostError) if the session or connection closes first. */
  withSftp<T>(fn: (sftp: SFTPWrapper, gone: Promise<never>) => Promise<T>): Promise<T>;
  /**
   * Set when exec runs as root through sudo but SFTP would run as the login user: runs a raised
   * command with the bytes as its stdin (upload-raised.ts).
   */
  execWithInput?(cmd: Command, input: Buffer | Readable): Promise<ExecResult>;
}

/** Bytes per SFTP write request and how many requests may be in flight: bounds memory, keeps the pipe full. */
const CHUNK = 64 * 1024;
const IN_FLIGHT = 16;
/** Bytes per read from a source file. */
const READ_BLOCK = 1024 * 1024;

/** What every temp file's name carries: `.<name>.hardway-tmp-<random>`. */
const TEMP_MARK = '.hardway-tmp-';

/** The prefix of every temp file for a target: `.<name>.hardway-tmp-`. */
export function tempPrefix(path: string): string {
  return posix.join(posix.dirname(path), `.${posix.basename(path)}${TEMP_MARK}`);
}

/** Uploads source to path atomically with mode and owner (default root:root). */
export async function uploadAtomic(ch: UploadChannels, path: string, source: UploadSource, opts: UploadOptions): Promise<void> {
  assertTargetPath(path);
  const tmp = tempPrefix(path) + randomBytes(6).toString('hex');
  const [, [uid, gid]] = await Promise.all([ch.prepareDir(posix.dirname(path)), ch.ownerIds(opts.owner ?? DEFAULT_OWNER)]);
  if (ch.execWithInput) return uploadRaised(ch.machine, (cmd, input) => ch.execWithInput!(cmd, input), { path, tmp, source, mode: opts.mode, ids: [uid, gid] });

  const renamed = await ch.withSftp(async (sftp, gone) => {
    const req = requester(gone);
    try {
      const handle = await req<Buffer>((cb) => sftp.open(tmp, 'wx', { mode: 0o600 }, cb));
      try {
        await writeAll(sftp, handle, source, req);
        // Sent together, answered in order (requests on one handle are processed in order):
        // chown before chmod, because chown clears setuid/setgid bits.
        await Promise.all([
          optional(req, (cb) => sftp.ext_openssh_fsync(handle, cb)),
          req((cb) => sftp.fchown(handle, uid, gid, cb)),
          req((cb) => sftp.fchmod(handle, opts.mode, cb)),
        ]);
      } finally {
        await req((cb) => sftp.close(handle, cb)).catch(() => undefined);
      }
      // posix-rename replaces an existing target atomically; plain SFTP rename refuses to.
      return await optional(req, (cb) => sftp.ext_openssh_rename(tmp, path, cb));
    } catch (e) {
      await req((cb) => sftp.unlink(tmp, cb)).catch(() => undefined);
      throw e;
    }
  });
  if (!renamed) {
    const mv = sh`mv -f -- ${tmp} ${path}`;
    const r = await ch.exec(mv);
    if (r.code !== 0) {
      await ch.exec(sh`rm -f -- ${tmp}`).catch(() => undefined);
      throw new CommandError(ch.machine, mv.text, r.code, r.stderr);
    }
  }
}

/** Writes the source at increasing offsets with a bounded window of requests in flight. */
async function writeAll(sftp: SFTPWrapper, handle: Buffer, source: UploadSource, req: Requester): Promise<void> {
  // Files are read 1 MiB at a time and sent in CHUNK-sized requests: a read per request cost
  // more CPU than the encryption (a 350 MB push: 0.6 s of the main thread in reads).
  const blocks = 'data' in source ? [source.data] : createReadStream(source.file, { highWaterMark: READ_BLOCK });
  const inFlight = new Set<Promise<void>>();
  let failure: unknown;
  let offset = 0;
  for await (const block of blocks as AsyncIterable<Buffer>) {
    for (let i = 0; i < block.length && !failure; i += CHUNK) {
      const chunk = block.subarray(i, i + CHUNK);
      const p = req<number>((cb) => sftp.write(handle, chunk, 0, chunk.length, offset, cb)).then(
        () => void inFlight.delete(p),
        (e) => {
          failure ??= e;
          inFlight.delete(p);
        },
      );
      inFlight.add(p);
      offset += chunk.length;
      if (inFlight.size >= IN_FLIGHT) await Promise.race(inFlight);
    }
    if (failure) break;
  }
  await Promise.all(inFlight);
  if (failure) throw failure;
}

/** Rejects a target that is not a normalized absolute file path (a programming error, not user input). */
export function assertTargetPath(path: string): void {
  if (!posix.isAbsolute(path) || path.endsWith('/') || posix.normalize(path) !== path) {
    throw new TypeError(`upload target must be a normalized absolute file path, got ${JSON.stringify(path)}`);
  }
}

/** A directory made ready for uploads: it exists, and crashed uploads' temp files in it are gone. */
export function prepareDirCommand(dir: string): Command {
  return sh`mkdir -p -- ${dir} && rm -f -- ${dir.replace(/\/$/, '')}/.*${TEMP_MARK}*`;
}

/** Prints an owner's numeric uid and gid, one per line. */
export function ownerCommand(owner = DEFAULT_OWNER): Command {
  const [user, group] = owner.split(':') as [string, string | undefined];
  const gid = group === undefined ? sh`id -g -- ${user}` : sh`getent group ${group} | cut -d: -f3`;
  return sh`id -u -- ${user} && ${gid}`;
}

/** Both in one round trip, for a transport that remembers nothing between uploads. */
export function prepareCommand(path: string, owner = DEFAULT_OWNER): Command {
  return sh`${prepareDirCommand(posix.dirname(path))} && ${ownerCommand(owner)}`;
}

/** Reads `uid\ngid` printed by ownerCommand; an unknown group is a CommandError naming the owner. */
export function parseOwnerIds(stdout: string, machine: string, cmd: Command, owner = DEFAULT_OWNER): [number, number] {
  const [uid, gid] = stdout.trim().split('\n').map(Number);
  if (!Number.isInteger(uid) || !Number.isInteger(gid)) {
    throw new CommandError(machine, cmd.text, 1, `owner ${owner}: user or group not found on the machine`);
  }
  return [uid!, gid!];
}

type Callback<T> = (err: Error | null | undefined, value?: T) => void;
/** Sends one SFTP request and waits for its answer, or for the session to be gone. */
type Requester = <T = void>(fn: (cb: Callback<T>) => void) => Promise<T>;

/** ssh2 leaves requests sent after a session closed unanswered: race every request with `gone`. */
function requester(gone: Promise<never>): Requester {
  return <T>(fn: (cb: Callback<T>) => void) =>
    Promise.race([new Promise<T>((resolve, reject) => fn((err, value) => (err ? reject(err) : resolve(value as T)))), gone]);
}

/** Runs an OpenSSH extension request; false when the server does not offer it (ssh2 throws synchronously). */
async function optional(req: Requester, fn: (cb: Callback<void>) => void): Promise<boolean> {
  let started = false;
  try {
    await req((cb) => {
      fn(cb);
      started = true;
    });
    return true;
  } catch (e) {
    if (!started) return false;
    throw e;
  }
}
