// `lab stop`, `lab start` and `lab reboot` of one machine. A reboot is real: systemd inside the
// machine reboots, nspawn exits, and the machine boots again over the same overlay (so
// cloud-init runs again and rewrites /etc/hosts, as on a cloud VM).
import { ensureNspawnRuntime, runningPid, stopMachine, waitForExit } from './boot.ts';
import { prepareMachine } from './machine.ts';
import { hostVeth, waitForVethGone } from './veth.ts';
import { machineDir, type LabPaths } from './names.ts';
import { ensureBridge } from './network.ts';
import { ensureLabKey } from './outputs.ts';
import { findMachine } from './plan.ts';
import { checkLabHost } from './preconditions.ts';
import type { ProgressOptions } from './progress.ts';
import { sh } from '../shell.ts';
import { labConnector, type LabConnect } from './connect.ts';
import { bootMachines } from './up.ts';
import type { LabMachine, LabState } from './types.ts';

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
    await rebootFromInside(labConnector(state.plan.spec.dir, { readyTimeoutMs: 5_000, retry: { attempts: 1 } }), m);
    // nspawn exits (status 133) once systemd inside has rebooted; a machine that did not obey is stopped.
    if (!(await waitForExit(pid, m.unit, 60_000))) await stopMachine(mdir, m);
    // The new nspawn needs the old veth's name: it goes with the old network namespace, later.
    if (veth !== undefined) await waitForVethGone(veth);
  }
  await labStartMachine(state, paths, hostname, progress);
}

/**
 * `systemctl reboot` on the machine through the lab's connector (raised as every command of its
 * login is). The connection drops while systemd reboots, so neither the exit status nor a dropped
 * connection says anything here: the nspawn process exiting does (the caller waits for it).
 */
export async function rebootFromInside(connect: LabConnect, m: LabMachine): Promise<void> {
  const t = await connect(m).catch(() => undefined);
  if (!t) return;
  try {
    await t.exec(sh`systemctl reboot`, { timeoutMs: 15_000 }).catch(() => undefined);
  } finally {
    await t.close().catch(() => undefined);
  }
}
