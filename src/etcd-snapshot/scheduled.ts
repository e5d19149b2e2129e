// The scheduled snapshots (etcd.snapshots in cluster.yaml) on the control-plane machine that takes
// them: `hardway etcd snapshot list` reads them through the probe registry (name, time, size,
// revision), `hardway etcd snapshot fetch` copies one to the jumpbox, checked as a saved one is
// (integrity hash, etcdctl snapshot status) before it gets its name under backups/ (0600 under
// 0700), so a restore takes it like a snapshot saved by hand.
import { randomBytes } from 'node:crypto';
import { linkSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { Writable } from 'node:stream';
import { createFacts } from '../engine/facts.ts';
import { CommandError, FailureError, InputError } from '../errors.ts';
import type { Inventory, Machine } from '../inventory.ts';
import { SERVER } from '../layout.ts';
import { pathError } from '../input-file.ts';
import { SCHEDULED_NAME, scheduledSnapshots, type ScheduledSnapshot } from '../probes/system.ts';
import { snapshotMachine } from '../render/etcd-snapshots.ts';
import { sh } from '../shell.ts';
import type { Transport } from '../transport/types.ts';
import { say } from '../ui/say.ts';
import { checkTarget } from './save.ts';
import { checkSnapshotFile, defaultSnapshotFile, describeStatus, shownPath, type SnapshotStatus } from './snapshot-file.ts';

/** What list and fetch need; `connect` is the SSH transport in production. */
export interface ScheduledRun {
  inventory: Inventory;
  cwd: string;
  out: Writable;
  connect(m: Machine): Promise<Transport>;
}

/** The machine that takes the scheduled snapshots; InputError when the inventory has no control plane. */
function holder(inv: Inventory): Machine {
  const m = snapshotMachine(inv);
  if (!m) throw new InputError(`${shownPath(inv.machinesFile, inv.dir)} has no control-plane machine: no etcd, no snapshots`, 'add a control-plane line to machines.txt');
  return m;
}

/** The scheduled snapshots there, newest first, read in one facts batch. */
async function read(t: Transport): Promise<ScheduledSnapshot[]> {
  const { list } = await createFacts(t).ask({ list: scheduledSnapshots.ask(SERVER.etcdSnapshotsDir, `${SERVER.bin}/etcdctl`) });
  return list;
}

/** One line per snapshot: time, size, revision, name. */
export function snapshotLines(list: readonly ScheduledSnapshot[]): string[] {
  return list.map((s) => `${s.time.toISOString().replace(/\.\d+Z$/, 'Z')}  ${String(s.size).padStart(10)} bytes  revision ${s.revision ?? '(unreadable)'}  ${s.name}`);
}

/** `etcd snapshot list`: prints the scheduled snapshots, newest first; returns them. */
export async function listScheduled(run: ScheduledRun): Promise<ScheduledSnapshot[]> {
  const m = holder(run.inventory);
  const t = await run.connect(m);
  try {
    const list = await read(t);
    const schedule = run.inventory.settings.etcd.snapshots;
    const taken = schedule ? `taken every ${schedule.every}, the newest ${schedule.keep} kept` : 'etcd.snapshots is not set in cluster.yaml: none are taken';
    if (list.length === 0) say(run.out, `No scheduled snapshot on ${m.hostname} in ${SERVER.etcdSnapshotsDir} (${taken}).`);
    else say(run.out, `${list.length} scheduled snapshot(s) on ${m.hostname} in ${SERVER.etcdSnapshotsDir} (${taken}), newest first:\n${snapshotLines(list).join('\n')}`);
    return list;
  } finally {
    await t.close().catch(() => undefined);
  }
}

/** What fetch needs beyond list: which snapshot (default the newest), where to (default backups/NAME), and etcdctl's status of the copy. */
export interface FetchRun extends ScheduledRun {
  name?: string;
  /** Absolute; default backups/<name> beside machines.txt. */
  file?: string;
  now: Date;
  /** `etcdctl snapshot status` of the local copy (the jumpbox's etcdctl). */
  status(file: string): Promise<SnapshotStatus>;
}

/** `etcd snapshot fetch`: copies one scheduled snapshot to the jumpbox, checked before it gets its name. */
export async function fetchScheduled(run: FetchRun): Promise<{ file: string; status: SnapshotStatus }> {
  if (run.name !== undefined && !SCHEDULED_NAME.test(run.name)) {
    throw new InputError(`${JSON.stringify(run.name.slice(0, 80))} is not the name of a scheduled snapshot`, 'names look like etcd-snapshot-20261201T120000Z.db: "hardway etcd snapshot list" shows them');
  }
  if (run.file) checkTarget(run.file, run.cwd);
  const m = holder(run.inventory);
  const t = await run.connect(m);
  try {
    const list = await read(t);
    const chosen = run.name === undefined ? list[0] : list.find((s) => s.name === run.name);
    if (!chosen) {
      const there = list.length ? `there: ${list.map((s) => s.name).join(', ')}` : 'there are none yet (etcd.snapshots in cluster.yaml, then "hardway up")';
      throw new InputError(run.name === undefined ? `no scheduled snapshot on ${m.hostname} in ${SERVER.etcdSnapshotsDir}` : `no scheduled snapshot ${run.name} on ${m.hostname}`, there);
    }
    const file = run.file ?? join(dirname(defaultSnapshotFile(run.inventory.dir, run.now)), chosen.name);
    if (!run.file) checkTarget(file, run.cwd);
    const remote = `${SERVER.etcdSnapshotsDir}/${chosen.name}`;
    // base64 over the exec channel: the transport writes files, it does not read them; the copy is
    // checked whole below (the integrity hash etcd appended), so a cut or garbled stream is refused.
    const cmd = sh`base64 -w 0 ${remote}`;
    const r = await t.exec(cmd, { timeoutMs: 30 * 60_000, logAs: `read ${remote} (base64)` });
    if (r.code !== 0) throw new CommandError(m.hostname, cmd.text, r.code, r.stderr);
    const tmp = join(dirname(file), `.${basename(file)}.${randomBytes(6).toString('hex')}.tmp`);
    try {
      writeFileSync(tmp, Buffer.from(r.stdout, 'base64'), { mode: 0o600, flag: 'wx' });
      await checkSnapshotFile(tmp, run.cwd).catch((e: Error) => {
        throw new FailureError(`the copy of ${remote} from ${m.hostname} fails its check: ${e.message}`, 'fetch it again, or another one ("hardway etcd snapshot list")');
      });
      const status = await run.status(tmp);
      // link, not rename: a FILE made meanwhile is never replaced.
      try {
        linkSync(tmp, file);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'EEXIST') throw new InputError(`${shownPath(file, run.cwd)} already exists`, 'give a new file name (a snapshot is never overwritten)');
        throw pathError(e, shownPath(file, run.cwd)) ?? e;
      }
      say(run.out, `Fetched ${chosen.name} from ${m.hostname} to ${shownPath(file, run.cwd)} (mode 0600): ${describeStatus(status)}`);
      return { file, status };
    } finally {
      rmSync(tmp, { force: true });
    }
  } finally {
    await t.close().catch(() => undefined);
  }
}
