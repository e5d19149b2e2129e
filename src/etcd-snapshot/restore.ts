// `hardway etcd snapshot restore FILE`: the file is checked on the jumpbox first (integrity hash,
// then etcdctl snapshot status), so a file that is not a snapshot changes nothing; then the plan
// of ./restore-plan.ts runs phase by phase on every control-plane machine at once. A phase that
// fails on any member stops the restore there and says what state the cluster is in.
import { statSync } from 'node:fs';
import type { Writable } from 'node:stream';
import { say } from '../ui/say.ts';
import { applyChange, describeChange } from '../engine/apply.ts';
import { loggedTransport } from '../engine/logged-transport.ts';
import type { RunLog } from '../ui/run-log.ts';
import { FailureError, InputError } from '../errors.ts';
import type { Inventory, Machine } from '../inventory.ts';
import type { Transport } from '../transport/types.ts';
import { restorePlan, type RestorePhase, type RestorePlan } from './restore-plan.ts';
import { checkSnapshotFile, describeStatus, fileSha256, fileStamp, shownPath, type SnapshotStatus } from './snapshot-file.ts';

/** What one restore needs; `connect` and `status` are the SSH transport and the jumpbox's etcdctl in production. */
export interface RestoreRun {
  inventory: Inventory;
  /** The snapshot on the jumpbox (absolute). */
  file: string;
  cwd: string;
  dryRun: boolean;
  /** --yes: without it (and without dryRun) the file is checked, then the restore refused. */
  confirmed: boolean;
  /** The refusal without --yes, given what it would do (the CLI's, with the user's command line to run again); default: a plain one. */
  refuse?: (wouldDo: string) => Error;
  out: Writable;
  now: Date;
  /** `etcdctl snapshot status` of the local file; throws InputError when etcdctl says it is not a snapshot. */
  status(file: string): Promise<SnapshotStatus>;
  connect(m: Machine): Promise<Transport>;
  /** Opens the run log, once the file passed its checks (not for a dry run). */
  openLog?: () => RunLog;
}

/** Checks the snapshot, then restores it on every member (or, with dryRun, prints the plan). */
export async function restoreSnapshot(run: RestoreRun): Promise<void> {
  const shown = shownPath(run.file, run.cwd);
  await checkSnapshotFile(run.file, run.cwd);
  const status = await run.status(run.file);
  const snapshot = { file: run.file, sha256: await fileSha256(run.file), size: statSync(run.file).size };
  const plan = restorePlan(run.inventory, snapshot, fileStamp(run.now));
  const names = plan.members.map((m) => m.hostname).join(', ');
  say(run.out, `${shown}: an etcd snapshot: ${describeStatus(status)}`);
  if (run.dryRun) {
    say(run.out, `Would restore it on ${plan.members.length} control-plane machine(s): ${names}. Nothing was changed.`);
    for (const [i, phase] of plan.phases.entries()) {
      say(run.out, `${i + 1}. ${phase.title}`);
      for (const [host, changes] of phase.changes) for (const c of changes) say(run.out, `   ${host}: ${describeChange(c)}`);
    }
    return;
  }
  // Like reset and remove-node: it destroys the cluster's state, so it runs only when asked twice.
  if (!run.confirmed) {
    const wouldDo = `stops the control plane and etcd on ${names} and replaces the cluster's whole state with the snapshot's`;
    throw run.refuse?.(wouldDo) ?? new InputError(`"hardway etcd snapshot restore" ${wouldDo}: rerun with --yes to do it`, 'add --dry-run to see every command it would run on each machine');
  }
  say(run.out, `Restoring it on ${plan.members.length} control-plane machine(s): ${names}`);
  const log = run.openLog?.();
  const transports = await connectAll(plan.members, run, log).catch((e: unknown) => {
    log?.close();
    throw e;
  });
  try {
    for (const [i, phase] of plan.phases.entries()) {
      say(run.out, `${i + 1}/${plan.phases.length} ${phase.title}`);
      const started = Date.now();
      const failed = await runPhase(phase, transports);
      log?.write(`phase ${i + 1}/${plan.phases.length} (${phase.title}) ${failed.length ? 'failed' : 'done'} after ${Date.now() - started} ms`);
      if (failed.length && phase.kind === 'cleanup') {
        // The cluster is restored: a copy left behind is worth a warning, not a failed restore.
        for (const f of failed) say(run.out, `warning: ${f}`);
      } else if (failed.length) {
        await runPhase(plan.phases.at(-1)!, transports);
        throw new FailureError(`etcd snapshot restore failed: ${phase.title}:\n${failed.join('\n')}`, stateAfter(phase, plan));
      }
    }
  } finally {
    await Promise.all([...transports.values()].map((t) => t.close().catch(() => undefined)));
    log?.close();
  }
  for (const [host, dir] of plan.keptDataDirs) say(run.out, `${host}: the data directory from before the restore is kept at ${dir} (remove it when you no longer need it)`);
  say(run.out, `Restored: etcd holds the snapshot's data (revision ${status.revision}) and every API server is ready.`);
}

/** One connection per member before anything changes: a machine that does not answer stops the restore untouched. */
async function connectAll(members: Machine[], run: RestoreRun, log: RunLog | undefined): Promise<Map<string, Transport>> {
  const opened = await Promise.allSettled(members.map((m) => run.connect(m)));
  const transports = new Map<string, Transport>();
  const failed: string[] = [];
  opened.forEach((o, i) => {
    const host = members[i]!.hostname;
    if (o.status === 'fulfilled') transports.set(host, log ? loggedTransport(o.value, { log }, host) : o.value);
    else failed.push(`${host}: ${(o.reason as Error).message}`);
  });
  if (failed.length) {
    await Promise.all([...transports.values()].map((t) => t.close().catch(() => undefined)));
    throw new FailureError(`cannot reach every control-plane machine, so nothing was changed:\n${failed.join('\n')}`, 'every member is restored together; bring the machine back, then run the restore again');
  }
  return transports;
}

/** Runs one phase on every member at once (each member's changes in order); the failures, one line each. */
async function runPhase(phase: RestorePhase, transports: Map<string, Transport>): Promise<string[]> {
  const results = await Promise.allSettled([...phase.changes].map(async ([host, changes]) => {
    for (const c of changes) await applyChange(transports.get(host)!, c);
  }));
  return results.flatMap((r) => (r.status === 'rejected' ? [(r.reason as Error).message] : []));
}

/** What the user must know after a failed phase: what is stopped, where the old data is. */
function stateAfter(phase: RestorePhase, plan: RestorePlan): string {
  const kept = [...plan.keptDataDirs.values()][0];
  switch (phase.kind) {
    case 'prepare':
      return 'nothing was stopped or changed on the cluster; the copies of the snapshot were removed';
    case 'stop':
      return 'etcd\'s data is untouched, but some services may be stopped: "hardway up" starts them again';
    case 'restore':
      return `etcd and the API servers are stopped. Where the swap happened, the data from before is at ${kept}; ` +
        'elsewhere it is still in place. Fix the cause and restore again, or move the data back and run "hardway up"';
    case 'start':
      return `the restored data is in place (the data from before is at ${kept}); see the member's "journalctl -u etcd" or "-u kube-apiserver", then "hardway up" starts what is stopped`;
    case 'cleanup':
      return `remove ${plan.staged} by hand`;
  }
}
