// etcdctl reads: probes of etcd over TLS with the client certificate hardway issued: its health (of the local
// member, or of every member) and the wait for it.
import { sh, type Command } from '../shell.ts';
import { etcdctl, waitEtcdCommand } from '../steps/support/etcd.ts';
import { probe, waitProbe } from './probe.ts';

/**
 * `etcdctl endpoint health` against the local member over TLS with client-certificate auth; with
 * `cluster`, against every member of the member list (each at its advertised client URL).
 */
export function etcdHealthCommand(cluster = false): Command {
  return cluster ? etcdctl(sh`endpoint health --cluster`) : etcdctl(sh`endpoint health`);
}

/** etcd's health as etcdctl says it (its error on the same stdout). */
export const etcdHealth = probe('etcd-health', (cluster: boolean) => sh`${etcdHealthCommand(cluster)} 2>&1`);

/** Waits (up to its seconds) until the local member reports healthy over TLS; says the last answer when it gives up. */
export const etcdHealthy = waitProbe('wait-etcd', (timeoutS: number) => sh`{ ${waitEtcdCommand(timeoutS)}; } 2>&1`);

/** One scheduled snapshot on the machine that takes them: its file name, size and the revision it holds. */
export interface ScheduledSnapshot {
  name: string;
  /** When it was taken (UTC), from its name. */
  time: Date;
  size: number;
  /** etcdctl snapshot status's revision; undefined when etcdctl could not read the file. */
  revision?: number;
}

/** The names the snapshot script gives: etcd-snapshot-<UTC stamp>.db. */
export const SCHEDULED_NAME = /^etcd-snapshot-(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z\.db$/;

/**
 * `NAME SIZE REVISION` for each scheduled snapshot in `dir` (REVISION `-` when etcdctl cannot read
 * it); nothing when the directory does not exist. The revision is read by etcdctl on the machine.
 */
export function scheduledSnapshotsCommand(dir: string, etcdctlPath: string): Command {
  return sh`cd ${dir} 2>/dev/null || exit 0; for f in etcd-snapshot-*.db; do [ -f "$f" ] || continue; r=$(ETCDCTL_API=3 ${etcdctlPath} snapshot status "$f" -w json 2>/dev/null | sed -n 's/.*"revision":\\([0-9]*\\).*/\\1/p'); echo "$f $(stat -c %s "$f") \${r:--}"; done; :`;
}

/** Parses scheduledSnapshotsCommand's lines, newest first (lines that are not a snapshot's are left out). */
export function parseScheduledSnapshots(text: string): ScheduledSnapshot[] {
  return text.split('\n').flatMap((line) => {
    const [name, size, revision] = line.trim().split(/\s+/);
    const m = name ? SCHEDULED_NAME.exec(name) : null;
    if (!m || !/^\d+$/.test(size ?? '')) return [];
    const time = new Date(Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!));
    return [{ name: name!, time, size: Number(size), ...(/^\d+$/.test(revision ?? '') ? { revision: Number(revision) } : {}) }];
  }).sort((a, b) => b.name.localeCompare(a.name));
}

/** The scheduled snapshots of the machine that takes them, newest first. */
export const scheduledSnapshots = probe('scheduled-snapshots', (dir: string, etcdctlPath: string) => scheduledSnapshotsCommand(dir, etcdctlPath), (a) => parseScheduledSnapshots(a.stdout));
