// The restore of an etcd snapshot on every control-plane machine, as data: phases run one after
// another, each phase on every member side by side (one member's changes in order). Pure: the
// inventory, the snapshot and a time stamp in, the changes out, so --dry-run prints exactly what
// a run does and unit tests read it for 1 and for 3 members.
import type { Inventory, Machine } from '../inventory.ts';
import { SERVER } from '../layout.ts';
import type { Change, LocalFileContent } from '../engine/types.ts';
import { etcdClusterToken, etcdInitialCluster } from '../render/control-plane.ts';
import { sh } from '../shell.ts';
import { waitApiCommand } from '../probes/api.ts';
import { waitEtcdCommand } from '../probes/etcd.ts';
import { CONTROL_PLANE_SERVICES } from '../steps/support/components.ts';

/** Where the snapshot is copied on each member before the restore (0700 directory, file 0600). */
export const STAGING_DIR = '/var/lib/hardway/etcd-restore';

/** Seconds a member may take to be healthy again, and an API server to answer /readyz. */
const ETCD_WAIT_S = 120;
const API_WAIT_S = 180;

/** What a phase is for: whether the cluster is still untouched when it fails. */
export type PhaseKind = 'prepare' | 'stop' | 'restore' | 'start' | 'cleanup';

/** One phase: the same kind of work on every member at once. */
export interface RestorePhase {
  kind: PhaseKind;
  title: string;
  /** Each member's changes, in order, by hostname. */
  changes: Map<string, Change[]>;
}

/** The whole restore, and where each member's data directory from before goes. */
export interface RestorePlan {
  members: Machine[];
  /** The snapshot's path on every member while the restore runs. */
  staged: string;
  /** Per hostname, where its data directory from before the restore is kept (moved, never deleted). */
  keptDataDirs: Map<string, string>;
  phases: RestorePhase[];
}

/** The etcd member identity a restore gives each machine: the same flags its etcd unit starts with. */
export function memberFlags(inv: Inventory, m: Machine): string[] {
  return [
    `--name=${m.hostname}`,
    `--initial-cluster=${etcdInitialCluster(inv)}`,
    `--initial-cluster-token=${etcdClusterToken(inv)}`,
    `--initial-advertise-peer-urls=https://${m.ip}:2380`,
  ];
}

/** The plan that restores `snapshot` on every control-plane machine of the inventory. */
export function restorePlan(inv: Inventory, snapshot: LocalFileContent, stamp: string): RestorePlan {
  const members = inv.controlPlanes;
  const staged = `${STAGING_DIR}/snapshot-${stamp}.db`;
  const restored = `${SERVER.etcdDataDir}.restore-${stamp}`;
  const kept = `${SERVER.etcdDataDir}.before-restore-${stamp}`;
  const services = [...CONTROL_PLANE_SERVICES];
  const each = (kind: PhaseKind, title: string, changes: (m: Machine) => Change[]): RestorePhase => ({
    kind, title, changes: new Map(members.map((m) => [m.hostname, changes(m)])),
  });
  const phases: RestorePhase[] = [
    each('prepare', 'copy the snapshot to every member', () => [
      { kind: 'exec', cmd: sh`install -d -m 0700 ${STAGING_DIR} && chmod 0700 ${STAGING_DIR}`, reason: 'a private directory for the snapshot' },
      { kind: 'put', path: staged, content: snapshot, mode: 0o600, secret: true, reason: 'the snapshot (holds every secret of the cluster)' },
      { kind: 'exec', cmd: sh`echo ${`${snapshot.sha256}  ${staged}`} | sha256sum --check --status`, reason: 'the copy is the file checked on the jumpbox' },
    ]),
    // The API servers first: none may write to an etcd that is about to be replaced.
    each('stop', 'stop the API servers, controller managers and schedulers', () => [
      { kind: 'exec', cmd: sh`systemctl stop ${services}`, reason: 'nothing may write to etcd during the restore' },
    ]),
    each('stop', 'stop etcd', () => [{ kind: 'exec', cmd: sh`systemctl stop etcd`, reason: 'its data directory is replaced' }]),
    each('restore', 'restore each member from the snapshot', (m) => [
      {
        kind: 'exec',
        cmd: sh`ETCDCTL_API=3 ${SERVER.bin}/etcdctl snapshot restore ${staged} ${memberFlags(inv, m)} --data-dir=${restored}`,
        timeoutMs: 30 * 60_000,
        reason: `member ${m.hostname} of a new cluster holding the snapshot's data`,
      },
      {
        kind: 'exec',
        // mv -T: never into an existing directory. The restored tree gets the old one's owner and mode 0700, as bootstrap-etcd wants it.
        cmd: sh`mv -T ${SERVER.etcdDataDir} ${kept} && mv -T ${restored} ${SERVER.etcdDataDir} && chown -R --reference=${kept} ${SERVER.etcdDataDir} && chmod 0700 ${SERVER.etcdDataDir}`,
        reason: `the restored data in place; the data from before kept at ${kept}`,
      },
    ]),
    // Every member starts at once: with several, each waits for the others to elect a leader.
    each('start', 'start etcd and wait until every member is healthy', () => [
      { kind: 'exec', cmd: sh`systemctl start --no-block etcd`, reason: 'etcd on the restored data' },
      { kind: 'exec', cmd: waitEtcdCommand(ETCD_WAIT_S), timeoutMs: (ETCD_WAIT_S + 30) * 1000, reason: 'the member answers over TLS' },
    ]),
    each('start', 'start the API servers, controller managers and schedulers and wait for the API', () => [
      { kind: 'exec', cmd: sh`systemctl start ${services}`, reason: 'the control plane on the restored etcd' },
      { kind: 'exec', cmd: waitApiCommand(API_WAIT_S), timeoutMs: (API_WAIT_S + 30) * 1000, reason: 'the API server is ready (/readyz)' },
    ]),
    each('cleanup', 'remove the copies of the snapshot', () => [
      { kind: 'exec', cmd: sh`rm -f ${staged} && rmdir --ignore-fail-on-non-empty ${STAGING_DIR}`, reason: 'no copy of the secrets stays behind' },
    ]),
  ];
  return { members, staged, keptDataDirs: new Map(members.map((m) => [m.hostname, kept])), phases };
}
