// What an etcd snapshot file is, checked on the jumpbox before any machine is touched: a bbolt
// database (etcd's backend) followed by the SHA-256 of the database that `etcdctl snapshot save`
// appends (etcd's server sends it as the last message of the snapshot stream; `snapshot restore`
// checks it unless --skip-hash-check). Also where `snapshot save` puts a file by default.
import { createHash } from 'node:crypto';
import { closeSync, createReadStream, openSync, readSync, statSync } from 'node:fs';
import { dirsInside, lstatOrNothing, writeFilesInside } from '../output-file.ts';
import { join, relative } from 'node:path';
import { InputError } from '../errors.ts';

/** The directory beside machines.txt that holds snapshots saved without a FILE argument. */
export const BACKUPS_DIR = 'backups';

/** bbolt's magic number, in its meta page after the 16-byte page header (little-endian). */
const BOLT_MAGIC = 0xed0cdaed;
/** The bbolt file format version etcd writes. */
const BOLT_VERSION = 2;
/** etcd's restore sees a hash when the size is a multiple of 512 plus 32 (bbolt pages are 4 KiB). */
const HASH_SIZE = 32;

/** What `etcdctl snapshot status -w json` says of a snapshot. */
export interface SnapshotStatus {
  hash: number;
  revision: number;
  totalKey: number;
  totalSize: number;
}

/**
 * Refuses (InputError, exit 2) anything that is not a snapshot saved by `etcdctl snapshot save`:
 * not a regular file, not a bbolt database, or whose integrity hash is missing or wrong. Reads the
 * file in a stream (a snapshot can be gigabytes); never prints any of it.
 */
export async function checkSnapshotFile(file: string, cwd: string): Promise<void> {
  const shown = shownPath(file, cwd);
  const refuse = (why: string) => new InputError(`${shown} is not an etcd snapshot: ${why}`, 'give a file saved by "hardway etcd snapshot save" (or etcdctl snapshot save)');
  let size: number;
  try {
    const st = statSync(file);
    if (!st.isFile()) throw refuse('not a regular file');
    size = st.size;
  } catch (e) {
    if (e instanceof InputError) throw e;
    throw new InputError(`cannot read ${shown}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`, 'give the path of a snapshot file');
  }
  if (size < 4096 + HASH_SIZE) throw refuse(`${size} bytes is too small for a database`);
  const head = readAt(file, 0, 24);
  if (head.readUInt32LE(16) !== BOLT_MAGIC || head.readUInt32LE(20) !== BOLT_VERSION) throw refuse('no bbolt database header');
  if (size % 512 !== HASH_SIZE) throw refuse('no integrity hash at its end (a copy of a data directory\'s db file, or cut short)');
  const want = readAt(file, size - HASH_SIZE, HASH_SIZE).toString('hex');
  const got = await sha256Of(file, size - HASH_SIZE);
  if (got !== want) throw refuse('its integrity hash does not match its contents (damaged or cut short)');
}

/** Parses `etcdctl snapshot status -w json`; undefined when the output is not that. */
export function parseSnapshotStatus(stdout: string): SnapshotStatus | undefined {
  try {
    const j = JSON.parse(stdout) as Record<string, unknown>;
    const fields = ['hash', 'revision', 'totalKey', 'totalSize'] as const;
    if (!fields.every((f) => typeof j[f] === 'number')) return undefined;
    return { hash: j.hash as number, revision: j.revision as number, totalKey: j.totalKey as number, totalSize: j.totalSize as number };
  } catch {
    return undefined;
  }
}

/** One line for the user: what the snapshot holds, never its contents. */
export function describeStatus(s: SnapshotStatus): string {
  return `revision ${s.revision}, ${s.totalKey} keys, ${s.totalSize} bytes, hash ${s.hash.toString(16).padStart(8, '0')}`;
}

/** A UTC timestamp for file names: 20261201T195502Z. */
export function fileStamp(now: Date): string {
  return now.toISOString().replace(/\.\d+Z$/, 'Z').replace(/[-:]/g, '');
}

/**
 * The default snapshot file, backups/etcd-snapshot-<stamp>.db beside machines.txt. The directory is
 * made 0700 with a .gitignore of `*`: a snapshot holds every secret of the cluster (encrypted
 * Secrets, but also tokens and everything else), so it never lands in the project's repository.
 */
export function defaultSnapshotFile(projectDir: string, now: Date): string {
  // A directory of hardway's own inside the project: a link there is refused, never followed.
  const root = { dir: projectDir, dirMode: 0o700, hint: `${BACKUPS_DIR}/ beside machines.txt is where hardway keeps snapshots: move what is there away (hardway makes it), or give FILE` };
  const dir = dirsInside(root, BACKUPS_DIR, true);
  if (lstatOrNothing(join(dir, '.gitignore')) === undefined) {
    writeFilesInside(root, [{ path: `${BACKUPS_DIR}/.gitignore`, content: '# etcd snapshots hold the cluster\'s secrets: never commit them\n*\n', mode: 0o644 }]);
  }
  return join(dir, `etcd-snapshot-${fileStamp(now)}.db`);
}

/** A path as the user gave it: relative to where hardway runs when it is below it. */
export function shownPath(file: string, cwd: string): string {
  const rel = relative(cwd, file);
  return rel && !rel.startsWith('..') ? rel : file;
}

function readAt(file: string, position: number, length: number): Buffer {
  const fd = openSync(file, 'r');
  try {
    const buf = Buffer.alloc(length);
    readSync(fd, buf, 0, length, position);
    return buf;
  } finally {
    closeSync(fd);
  }
}

/** SHA-256 (hex) of a whole local file, streamed. */
export function fileSha256(file: string): Promise<string> {
  return sha256Of(file);
}

function sha256Of(file: string, length?: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const h = createHash('sha256');
    createReadStream(file, length === undefined ? {} : { start: 0, end: length - 1 })
      .on('data', (d) => h.update(d))
      .on('error', reject)
      .on('end', () => resolve(h.digest('hex')));
  });
}
