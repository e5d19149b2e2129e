// `lab status`: each machine of a lab, its address, whether nspawn runs it and whether SSH answers.
import { runningPid } from './boot.ts';
import { LAB_PROBE, labConnector } from './connect.ts';
import { machineDir, type LabPaths } from './names.ts';
import { sshProbe } from './ssh-wait.ts';
import type { LabState } from './types.ts';

/** One machine's status. */
export interface MachineStatus {
  hostname: string;
  fqdn: string;
  ip: string;
  role: string;
  podSubnet?: string;
  running: boolean;
  pid?: number;
  ssh: boolean;
}

/** A lab's status, as `lab status --json` prints it. */
export interface LabStatus {
  name: string;
  subnet: string;
  bridge: string;
  dir: string;
  machines: MachineStatus[];
}

/** Looks at every machine of the lab (in parallel); SSH is checked only for running machines. */
export async function labStatus(state: LabState, paths: LabPaths): Promise<LabStatus> {
  const { plan } = state;
  const connect = labConnector(plan.spec.dir, LAB_PROBE);
  const machines = await Promise.all(plan.machines.map(async (m): Promise<MachineStatus> => {
    const pid = runningPid(machineDir(paths, plan.spec.name, m.hostname), m);
    const ssh = pid !== undefined && (await sshProbe(connect, m)).ok;
    return { hostname: m.hostname, fqdn: m.fqdn, ip: m.ip, role: m.role, podSubnet: m.podSubnet, running: pid !== undefined, pid, ssh };
  }));
  return { name: plan.spec.name, subnet: plan.spec.subnet, bridge: plan.bridge, dir: plan.spec.dir, machines };
}

/** The status as a table for people. */
export function formatStatus(s: LabStatus): string {
  const rows = [['MACHINE', 'ADDRESS', 'ROLE', 'RUNNING', 'SSH'],
    ...s.machines.map((m) => [m.hostname, m.ip, m.role, m.running ? `yes (pid ${m.pid})` : 'no', m.ssh ? 'yes' : 'no'])];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  const table = rows.map((r) => r.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd()).join('\n');
  return `lab "${s.name}": subnet ${s.subnet}, bridge ${s.bridge}, directory ${s.dir}\n${table}`;
}
