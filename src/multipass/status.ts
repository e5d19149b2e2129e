// `multipass status`: each VM hardway launched under a prefix, as Multipass sees it (state,
// addresses), the address machines.txt has for it, and whether root gets in with the pinned key.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { FailureError, InputError } from '../errors.ts';
import { addressChanges, describeChanges, pickAddress } from './addresses.ts';
import { isDeleted, isRunning } from './json.ts';
import { FILES, machinesTxtAddresses } from './outputs.ts';
import { listRecords, readRecord, recordFile } from './record.ts';
import type { MultipassDeps } from './up.ts';

/** One VM's status. */
export interface VmStatus {
  vm: string;
  hostname: string;
  role: string;
  podSubnet?: string;
  /** Multipass's state, or "Missing" when Multipass no longer has the VM. */
  state: string;
  ipv4: string[];
  /** The address machines.txt has for the VM (undefined without machines.txt). */
  machinesTxt?: string;
  /** True when root logs in with the pinned host key and finds this launch's marker; undefined when not tried (not running). */
  ssh?: boolean;
  sshDetail?: string;
}

/** A prefix's status, as `multipass status --json` prints it. */
export interface MultipassStatus {
  name: string;
  dir: string;
  record: string;
  vms: VmStatus[];
}

/** Looks at every recorded VM (SSH probes in parallel, running VMs only). */
export async function multipassStatus(prefix: string, deps: Pick<MultipassDeps, 'client' | 'stateDir' | 'probe'>): Promise<MultipassStatus> {
  const record = readRecord(deps.stateDir, prefix);
  if (!record) {
    // Without Multipass there is nothing to launch with: say that (as up and down do), not "launch them".
    await deps.client.list();
    const others = listRecords(deps.stateDir);
    throw new InputError(`hardway has launched no Multipass VMs named "${prefix}-..."`,
      others.length > 0 ? `launched by hardway here: ${others.join(', ')}; pass --name NAME` : `launch them: hardway multipass up --name ${prefix}`);
  }
  const listed = new Map((await deps.client.list()).map((i) => [i.name, i]));
  const present = record.vms.filter((v) => listed.has(v.vm) && !isDeleted(listed.get(v.vm)!.state)).map((v) => v.vm);
  const info = await deps.client.info(present);
  const machinesFile = join(record.dir, FILES.machines);
  const inFile = existsSync(machinesFile) ? machinesTxtAddresses(readFileSync(machinesFile, 'utf8')) : new Map<string, string>();
  const vms = await Promise.all(record.vms.map(async (v): Promise<VmStatus> => {
    const inst = info.get(v.vm) ?? listed.get(v.vm);
    const ipv4 = inst?.ipv4 ?? [];
    const status: VmStatus = {
      vm: v.vm, hostname: v.hostname, role: v.role, ...(v.podSubnet ? { podSubnet: v.podSubnet } : {}),
      state: inst?.state ?? 'Missing', ipv4, ...(inFile.has(v.hostname) ? { machinesTxt: inFile.get(v.hostname) } : {}),
    };
    const ip = pickAddress(ipv4, inFile.get(v.hostname));
    if (inst && isRunning(inst.state) && ip) {
      const r = await deps.probe(record.dir, v.hostname, ip);
      status.ssh = r.status === 'ok' && r.marker.id === v.id;
      if (!status.ssh) status.sshDetail = r.status === 'ok' ? `marker ${r.marker.id ?? 'missing'} is not this launch's` : `${r.status}: ${r.detail}`;
    }
    return status;
  }));
  return { name: prefix, dir: record.dir, record: recordFile(deps.stateDir, prefix), vms };
}

/** The status as a table for people. */
export function formatStatus(s: MultipassStatus): string {
  const rows = [['VM', 'MACHINE', 'STATE', 'IPV4', 'MACHINES.TXT', 'SSH'],
    ...s.vms.map((v) => [v.vm, v.hostname, v.state, v.ipv4.join(',') || '--', v.machinesTxt ?? '--', v.ssh === undefined ? '--' : v.ssh ? 'yes' : 'no'])];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  const table = rows.map((r) => r.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd()).join('\n');
  const notes = s.vms.filter((v) => v.sshDetail).map((v) => `  ${v.vm}: ssh: ${v.sshDetail}`);
  return [`Multipass "${s.name}": files in ${s.dir}`, table, ...notes].join('\n');
}

/** The error status ends with when machines.txt no longer describes the VMs: a VM gone, or an address moved. */
export function statusProblem(s: MultipassStatus): FailureError | undefined {
  const missing = s.vms.filter((v) => v.state === 'Missing' || isDeleted(v.state)).map((v) => v.vm);
  const inFile = new Map(s.vms.flatMap((v) => (v.machinesTxt ? [[v.hostname, v.machinesTxt] as const] : [])));
  const changes = addressChanges(inFile, s.vms.flatMap((v) => {
    const ip = pickAddress(v.ipv4, v.machinesTxt);
    return ip ? [{ vm: v.vm, hostname: v.hostname, ip }] : [];
  }));
  if (missing.length === 0 && changes.length === 0) return undefined;
  const lines = [
    ...(changes.length ? ['address changed since machines.txt was written:', ...describeChanges(changes).map((l) => `  ${l}`)] : []),
    ...(missing.length ? [`gone from Multipass (or deleted): ${missing.join(', ')}`] : []),
  ];
  return new FailureError(lines.join('\n'),
    `run "hardway multipass up --name ${s.name}": it ${missing.length ? 'launches what is gone and ' : ''}rewrites machines.txt, known_hosts and ssh_config; then "hardway pin-hosts" so every machine's /etc/hosts follows`);
}
