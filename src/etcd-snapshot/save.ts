// `hardway etcd snapshot save [FILE]`: etcdctl on the jumpbox asks one member for a snapshot over
// TLS (the first control-plane machine that answers, or --node), into a temp file beside FILE
// that is 0600 from its first byte; the file is checked (integrity hash, etcdctl snapshot status)
// and only then gets its name, so FILE is always a whole, verified snapshot. Contents are never printed.
import { randomBytes } from 'node:crypto';
import { chmodSync, linkSync, rmSync, statSync } from 'node:fs';
import { pathError } from '../input-file.ts';
import { describeEntry, lstatOrNothing } from '../output-file.ts';
import { basename, dirname, join } from 'node:path';
import type { Writable } from 'node:stream';
import { say } from '../ui/say.ts';
import { CommandError, FailureError, InputError } from '../errors.ts';
import type { Inventory } from '../inventory.ts';
import type { Command } from '../shell.ts';
import type { ExecResult } from '../transport/types.ts';
import { clientUrl, jumpboxEtcdctl, snapshotSaveCommand, snapshotStatusCommand } from './jumpbox-etcdctl.ts';
import { checkSnapshotFile, defaultSnapshotFile, describeStatus, parseSnapshotStatus, shownPath, type SnapshotStatus } from './snapshot-file.ts';

/** What one save needs; `run` is the local command runner in production. */
export interface SaveRun {
  inventory: Inventory;
  /** FILE as given (absolute), or undefined for backups/etcd-snapshot-<time>.db. */
  file?: string;
  /** --node: the control-plane machine to ask (default: each in order until one answers). */
  node?: string;
  cwd: string;
  out: Writable;
  now: Date;
  run(cmd: Command): Promise<ExecResult>;
}

/** Saves a verified snapshot; returns where it is and what it holds. */
export async function saveSnapshot(s: SaveRun): Promise<{ file: string; status: SnapshotStatus }> {
  // The user's arguments first (exit 2), then what the project lacks.
  const members = chooseMembers(s.inventory, s.node);
  if (s.file) checkTarget(s.file, s.cwd);
  const etcdctl = jumpboxEtcdctl(s.inventory, true);
  const file = s.file ?? defaultSnapshotFile(s.inventory.dir, s.now);
  if (!s.file) checkTarget(file, s.cwd);
  const tmp = join(dirname(file), `.${basename(file)}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    const from = await saveFromFirst(s, etcdctl, members, tmp);
    chmodSync(tmp, 0o600);
    await checkSnapshotFile(tmp, s.cwd).catch((e: Error) => {
      throw new FailureError(`etcd sent a snapshot that fails its check: ${e.message}`);
    });
    const status = await localStatus(s, etcdctl, tmp);
    // link, not rename: a FILE made meanwhile by someone else (or a link there) is never replaced.
    try {
      linkSync(tmp, file);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'EEXIST') throw alreadyThere(shownPath(file, s.cwd));
      throw pathError(e, shownPath(file, s.cwd)) ?? e;
    }
    say(s.out, `Saved ${shownPath(file, s.cwd)} (mode 0600) from ${from}: ${describeStatus(status)}`);
    return { file, status };
  } finally {
    rmSync(tmp, { force: true });
    rmSync(`${tmp}.part`, { force: true });
  }
}

/** `etcdctl snapshot status` of a local file, parsed; FailureError with etcdctl's words otherwise. */
export async function localStatus(s: Pick<SaveRun, 'run'>, etcdctl: string, file: string): Promise<SnapshotStatus> {
  const cmd = snapshotStatusCommand(etcdctl, file);
  const r = await s.run(cmd);
  const status = r.code === 0 ? parseSnapshotStatus(r.stdout) : undefined;
  if (!status) throw new CommandError('jumpbox', cmd.text, r.code, r.stderr || r.stdout);
  return status;
}

function chooseMembers(inv: Inventory, node: string | undefined) {
  if (node === undefined) return inv.controlPlanes;
  const m = inv.controlPlanes.find((c) => c.hostname === node);
  if (!m) throw new InputError(`--node ${JSON.stringify(node.slice(0, 60))} is not a control-plane machine of ${shownPath(inv.machinesFile, inv.dir)}`, `etcd runs on: ${inv.controlPlanes.map((c) => c.hostname).join(', ')}`);
  return [m];
}

/** FILE must not exist yet (a snapshot is never overwritten) and its directory must. */
export function checkTarget(file: string, cwd: string): void {
  const shown = shownPath(file, cwd);
  // lstat: a link there, even to nothing, is something a snapshot would be written through.
  const there = lstatOrNothing(file);
  if (there?.isSymbolicLink()) throw new InputError(`${describeEntry(file, there)}: a snapshot is never written through a link`, 'give a new file name, or leave FILE out for a timestamped one under backups/');
  if (there) throw alreadyThere(shown);
  let dir;
  try {
    dir = statSync(dirname(file));
  } catch {
    throw new InputError(`${shownPath(dirname(file), cwd)}: no such directory for ${shown}`, 'create it first, or leave FILE out for backups/');
  }
  if (!dir.isDirectory()) throw new InputError(`${shownPath(dirname(file), cwd)} is not a directory`, 'give FILE in a directory');
}

function alreadyThere(shown: string): InputError {
  return new InputError(`${shown} already exists`, 'give a new file name (a snapshot is never overwritten), or leave FILE out for a timestamped one under backups/');
}

/** Asks each member in turn until one sends its snapshot; names the member it came from. */
async function saveFromFirst(s: SaveRun, etcdctl: string, members: Inventory['controlPlanes'], tmp: string): Promise<string> {
  const failures: string[] = [];
  for (const m of members) {
    const cmd = snapshotSaveCommand(etcdctl, s.inventory, clientUrl(m.ip), tmp);
    const r = await s.run(cmd);
    if (r.code === 0) return `${m.hostname} (${clientUrl(m.ip)})`;
    failures.push(new CommandError(m.hostname, cmd.text, r.code, lastLines(r.stderr)).message);
    rmSync(`${tmp}.part`, { force: true });
  }
  throw new FailureError(`no etcd member sent a snapshot:\n${failures.join('\n')}`, 'check etcd with "hardway verify" or "hardway doctor"');
}

/** etcdctl logs a line per event; the reason it failed is at the end. */
function lastLines(text: string): string {
  return text.trim().split('\n').slice(-3).join('\n');
}
