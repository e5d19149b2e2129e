// `multipass down`: delete and purge the VMs hardway launched under a prefix, and nothing else. A
// VM counts as hardway's when its name is in the prefix's record; a running one must also prove it
// over SSH (the pinned host key, and the marker of the launch the record names). Anything that
// fails the check is left alone and named, with the command that would delete it.
import { FailureError } from '../errors.ts';
import { isDeleted, isRunning } from './json.ts';
import { readRecord, removeRecord, writeRecord } from './record.ts';
import type { MultipassDeps } from './up.ts';

/** What `down` did. */
export interface DownResult {
  /** True when there was no record: nothing was deleted. */
  noRecord: boolean;
  deleted: string[];
  /** Recorded VMs Multipass no longer has. */
  gone: string[];
  /** VMs with the prefix that were not deleted, and why. */
  leftAlone: Array<{ vm: string; reason: string }>;
}

/** Deletes and purges the prefix's VMs that pass the checks; updates or removes the record. */
export async function multipassDown(prefix: string, deps: Pick<MultipassDeps, 'client' | 'stateDir' | 'probe'>): Promise<DownResult> {
  const record = readRecord(deps.stateDir, prefix);
  const instances = await deps.client.list();
  const named = instances.filter((i) => i.name.startsWith(`${prefix}-`));
  const strangers = named.filter((i) => !record?.vms.some((v) => v.vm === i.name))
    .map((i) => ({ vm: i.name, reason: 'hardway did not launch it (not in its record)' }));
  if (!record) return { noRecord: true, deleted: [], gone: [], leftAlone: strangers };

  const byName = new Map(instances.map((i) => [i.name, i]));
  const gone = record.vms.filter((v) => !byName.has(v.vm)).map((v) => v.vm);
  const leftAlone = [...strangers];
  const checks = await Promise.all(record.vms.filter((v) => byName.has(v.vm)).map(async (v) => {
    const inst = byName.get(v.vm)!;
    if (isDeleted(inst.state) || !isRunning(inst.state) || inst.ipv4.length === 0) return { vm: v.vm, ok: true };
    const r = await deps.probe(record.dir, v.hostname, inst.ipv4[0]!);
    if (r.status === 'ok' && r.marker.id === v.id) return { vm: v.vm, ok: true };
    const reason = r.status === 'ok' ? `its marker names another launch (${r.marker.id ?? 'none'}, hardway recorded ${v.id})`
      : r.status === 'host-key' ? 'it presents another host key than the one hardway gave it'
        : r.status === 'no-marker' ? 'it has no hardway marker' : `its marker could not be checked over SSH (${r.detail.split('\n').at(-1)})`;
    return { vm: v.vm, ok: false, reason };
  }));
  const deleted = checks.filter((c) => c.ok).map((c) => c.vm);
  for (const c of checks) if (!c.ok) leftAlone.push({ vm: c.vm, reason: c.reason! });
  await deps.client.deletePurge(deleted);

  const remaining = record.vms.filter((v) => leftAlone.some((l) => l.vm === v.vm));
  if (remaining.length === 0) removeRecord(deps.stateDir, prefix);
  else writeRecord(deps.stateDir, { ...record, vms: remaining });
  return { noRecord: false, deleted, gone, leftAlone };
}

/** What `down` would delete, for --dry-run: the recorded VMs Multipass still has, and those it would leave alone. Changes nothing. */
export async function describeDownPlan(prefix: string, deps: Pick<MultipassDeps, 'client' | 'stateDir'>): Promise<string[]> {
  const record = readRecord(deps.stateDir, prefix);
  const instances = await deps.client.list();
  const named = instances.filter((i) => i.name.startsWith(`${prefix}-`)).map((i) => i.name);
  const ours = named.filter((n) => record?.vms.some((v) => v.vm === n));
  const lines = [record ? `would delete and purge: ${ours.join(', ') || 'none'} (a running VM only once it shows the host key and marker hardway gave it)`
    : `hardway has launched no Multipass VMs named "${prefix}-...": nothing to delete`];
  const strangers = named.filter((n) => !ours.includes(n));
  if (strangers.length) lines.push(`would leave alone: ${strangers.join(', ')} (hardway did not launch them)`);
  return lines;
}

/** The lines `down` prints, and the error it ends with when a recorded VM was left alone. */
export function describeDown(prefix: string, r: DownResult): { lines: string[]; error?: FailureError } {
  const lines: string[] = [];
  if (r.noRecord) lines.push(`hardway has launched no Multipass VMs named "${prefix}-...": nothing to delete`);
  if (r.deleted.length) lines.push(`deleted and purged: ${r.deleted.join(', ')}`);
  if (r.gone.length) lines.push(`already gone from Multipass: ${r.gone.join(', ')}`);
  if (!r.noRecord && !r.deleted.length && !r.gone.length && !r.leftAlone.length) lines.push('nothing to delete');
  for (const l of r.leftAlone) lines.push(`left alone: ${l.vm}: ${l.reason}`);
  const ours = r.leftAlone.filter((l) => !l.reason.startsWith('hardway did not launch'));
  const error = ours.length === 0 ? undefined : new FailureError(`${ours.length} recorded VM(s) not deleted: ${ours.map((l) => l.vm).join(', ')}`,
    `if ${ours.length > 1 ? 'they are' : 'it is'} yours to remove: multipass delete --purge ${ours.map((l) => l.vm).join(' ')}`);
  return { lines, error };
}
