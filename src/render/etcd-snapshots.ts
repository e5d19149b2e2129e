// Scheduled etcd snapshots (etcd.snapshots in cluster.yaml): on the one control-plane machine that
// takes them, a script that saves a snapshot and keeps the newest N, its oneshot service, and the
// timer that runs it every interval. Nothing anywhere when the setting is off.
import type { Inventory, Machine } from '../inventory.ts';
import { SERVER } from '../layout.ts';
import type { TemplateSet } from './templates.ts';
import type { RenderedFile } from './types.ts';

/** The systemd timer that runs the snapshot service (the unit name systemctl takes). */
export const SNAPSHOT_TIMER = 'hardway-etcd-snapshot.timer';
/** The oneshot service that saves one snapshot. */
export const SNAPSHOT_SERVICE = 'hardway-etcd-snapshot';

/**
 * The control-plane machine that takes the scheduled snapshots: the first of machines.txt (the one
 * `etcd snapshot list` and `fetch` ask). One is enough: every member holds the same data.
 */
export function snapshotMachine(inv: Inventory): Machine | undefined {
  return inv.controlPlanes[0];
}

/** The script, service and timer on the snapshot machine when etcd.snapshots is set; nothing otherwise. */
export function renderEtcdSnapshots(inv: Inventory, machine: Machine, templates: TemplateSet): RenderedFile[] {
  const s = inv.settings.etcd.snapshots;
  if (!s || snapshotMachine(inv)?.hostname !== machine.hostname) return [];
  const values = {
    dir: SERVER.etcdSnapshotsDir, keep: s.keep, keepFrom: s.keep + 1, every: s.every, seconds: s.everySeconds, script: SERVER.etcdSnapshotScript,
    etcdctl: `${SERVER.bin}/etcdctl`, ca: SERVER.etcdCa, cert: SERVER.etcdClientCrt, key: SERVER.etcdClientKey,
  };
  const file = (path: string, template: string, mode: number): RenderedFile => ({ path, content: templates.render(template, values), mode, step: 'etcd-snapshots', services: [] });
  return [
    file(SERVER.etcdSnapshotScript, 'templates/etcd-snapshot.sh.hbs', 0o755),
    file(SERVER.etcdSnapshotService, 'units/hardway-etcd-snapshot.service.hbs', 0o644),
    file(SERVER.etcdSnapshotTimer, 'units/hardway-etcd-snapshot.timer.hbs', 0o644),
  ];
}
