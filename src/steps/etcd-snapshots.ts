// etcd-snapshots: scheduled snapshots of etcd (etcd.snapshots in cluster.yaml). On the first
// control-plane machine, a systemd timer runs a oneshot service every interval that saves a
// snapshot into a 0700 directory there and keeps the newest N (src/render/etcd-snapshots.ts).
// Every other control plane, and every one when the setting is off, has none: a timer an earlier
// run installed is stopped and its files removed (the snapshots already taken are kept).
import type { Change, ChangeStep, StepContext } from '../engine/types.ts';
import { formatMode } from '../engine/facts.ts';
import { SERVER } from '../layout.ts';
import { pathMode } from '../probes/system.ts';
import { SNAPSHOT_SERVICE, SNAPSHOT_TIMER } from '../render/etcd-snapshots.ts';
import { sh } from '../shell.ts';
import { fileChangesFrom, inspect } from './support/inspect.ts';
import { renderedFor } from './support/rendered.ts';
import { enableService, reloadChanges, startService } from './support/services.ts';

/** Every file the step may have installed on a machine. */
const FILES = [SERVER.etcdSnapshotScript, SERVER.etcdSnapshotService, SERVER.etcdSnapshotTimer];

/** The etcd-snapshots step. */
export const etcdSnapshotsStep: ChangeStep = {
  name: 'etcd-snapshots',
  title: 'Take etcd snapshots on a schedule (etcd.snapshots in cluster.yaml) on the first control plane',
  targets: (inv) => inv.controlPlanes,
  async plan(ctx: StepContext): Promise<Change[]> {
    const { inventory, machine, facts } = ctx;
    const { files } = renderedFor(inventory, machine, 'etcd-snapshots');
    const found = await inspect(facts, FILES, [SNAPSHOT_SERVICE, SNAPSHOT_TIMER], { dir: pathMode.ask(SERVER.etcdSnapshotsDir) });
    if (files.length === 0) {
      const there = FILES.filter((p) => found.files.get(p)!.exists);
      if (there.length === 0) return [];
      return [{
        kind: 'exec',
        // `|| :`: a timer systemd no longer knows is nothing to stop.
        cmd: sh`{ systemctl disable --now ${SNAPSHOT_TIMER} || :; } && rm -f ${there} && systemctl daemon-reload`,
        reason: inventory.settings.etcd.snapshots ? `scheduled snapshots are taken on ${inventory.controlPlanes[0]!.hostname}, not here` : 'etcd.snapshots is not set in cluster.yaml (the snapshots taken stay in place)',
      }];
    }
    const changes: Change[] = [];
    const mode = found.probes.dir;
    if (mode !== '700') {
      changes.push({
        kind: 'exec',
        cmd: sh`install -d -m 0700 ${SERVER.etcdSnapshotsDir} && chmod 0700 ${SERVER.etcdSnapshotsDir}`,
        reason: mode ? `snapshot directory mode is ${formatMode(parseInt(mode, 8))}, want 0700 (each snapshot holds every secret)` : 'snapshot directory missing',
      });
    }
    const fileWork = fileChangesFrom(found, files);
    changes.push(...fileWork, ...reloadChanges(found.services, fileWork));
    const timer = found.services.get(SNAPSHOT_TIMER);
    if (timer?.enabled !== 'enabled') changes.push({ kind: 'exec', cmd: enableService(SNAPSHOT_TIMER), reason: 'take snapshots after a reboot too' });
    if (timer?.active !== 'active') {
      changes.push({ kind: 'exec', cmd: startService('start', SNAPSHOT_TIMER), reason: `${SNAPSHOT_TIMER} is ${timer?.active || 'not running'}` });
    } else if (fileWork.some((c) => c.kind === 'put' && c.path === SERVER.etcdSnapshotTimer)) {
      changes.push({ kind: 'exec', cmd: startService('restart', SNAPSHOT_TIMER), reason: 'the interval changed' });
    }
    return changes;
  },
};
