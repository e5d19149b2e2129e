// `lab stop`, `lab start` and `lab reboot` of one machine. A reboot is real: systemd inside the
// machine reboots, nspawn exits, and the machine boots again over the same overlay (so
// cloud-init runs again and rewrites /etc/hosts, as on a cloud VM).
import { join } from 'node:path';
import { ensureNspawnRuntime, runningPid, stopMachine, waitForExit } from './boot.ts';
import { prepareMachine } from './machine.ts';
import { asRoot } from './login.ts';
import { hostVeth, waitForVethGone } from './veth.ts';
import { machineDir, type LabPaths } from './names.ts';
import { ensureBridge } from './network.ts';
import { ensureLabKey, LAB_FILES } from './outputs.ts';
import { findMachine } from './plan.ts';
import { checkLabHost } from './preconditions.ts';
import type { ProgressOptions } from './progress.ts';
import { tryLocal } from '../transport/local.ts';
import { bootMachines } from './up.ts';
import type { LabState } from './types.ts';

/** Stops one machine (clean shutdown); returns false if it was not running. */
export async function labStopMachine(state: LabState, paths: LabPaths, hostname: string): Promise<boolean> {
  await checkLabHost();
  const m = findMachine(state.plan, hostname);
  const mdir = machineDir(paths, state.plan.spec.name, m.hostname);
  const wasRunning = runningPid(mdir, m) !== undefined;
  await stopMachine(mdir, m);
  return wasRunning;
}

/** Starts one machine (remounting its overlay if needed) and waits for SSH; false if it already ran. */
export async function labStartMachine(state: LabState, paths: LabPaths, hostname: string, progress: ProgressOptions): Promise<boolean> {
  await checkLabHost();
  const { plan } = state;
  const m = findMachine(plan, hostname);
  const mdir = machineDir(paths, plan.spec.name, m.hostname);
  const wasRunning = runningPid(mdir, m) !== undefined;
  if (!wasRunning) {
    await ensureBridge(plan.bridge, plan.bridgeAddress);
    await ensureNspawnRuntime();
    const authorizedKey = await ensureLabKey(plan.spec.dir, plan.spec.name);
    await prepareMachine({ mdir, lab: plan.spec.name, machine: m, prefix: plan.prefix, rootfs: state.rootfs!, authorizedKey, ...(plan.spec.loginUser !== undefined ? { loginUser: plan.spec.loginUser } : {}) });
  }
  await bootMachines(state, paths, progress, [m.hostname]);
  return !wasRunning;
}

/** Reboots one machine from inside (systemctl reboot), then boots it again and waits for SSH. */
export async function labRebootMachine(state: LabState, paths: LabPaths, hostname: string, progress: ProgressOptions): Promise<void> {
  await checkLabHost();
  const m = findMachine(state.plan, hostname);
  const mdir = machineDir(paths, state.plan.spec.name, m.hostname);
  const pid = runningPid(mdir, m);
  if (pid !== undefined) {
    const veth = await hostVeth(pid);
    const sshConfigFile = join(state.plan.spec.dir, LAB_FILES.sshConfig);
    // The connection drops while systemd reboots, so ssh's own exit status says nothing here.
    await tryLocal`ssh -F ${sshConfigFile} -o BatchMode=yes -o ConnectTimeout=5 ${m.hostname} ${asRoot(state.plan.spec.loginUser, 'systemctl reboot')}`;
    // nspawn exits (status 133) once systemd inside has rebooted; a machine that did not obey is stopped.
    if (!(await waitForExit(pid, m.unit, 60_000))) await stopMachine(mdir, m);
    // The new nspawn needs the old veth's name: it goes with the old network namespace, later.
    if (veth !== undefined) await waitForVethGone(veth);
  }
  await labStartMachine(state, paths, hostname, progress);
}
