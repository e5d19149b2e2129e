// Starting and stopping one machine: systemd-nspawn booting systemd, detached from hardway (its
// own session, console to a log file), its pid recorded; stopping is SIGTERM to nspawn, which
// shuts the machine's systemd down cleanly (machinectl needs systemd on the host; we have none).
import { spawn } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { FailureError } from '../errors.ts';
import { withFileLock } from '../lock.ts';
import { createMachineCgroups, removeMachineCgroups } from './cgroups.ts';
import { local } from '../transport/local.ts';
import { isMountPoint } from './mounts.ts';
import { machinePaths } from './machine.ts';
import { hostVeth, waitForVethGone } from './veth.ts';
import type { LabMachine } from './types.ts';

/** systemd-nspawn needs this to be a tmpfs when the host runs no systemd (see lab-notes). */
export const NSPAWN_RUNTIME = '/run/systemd/nspawn';

/** The lock two labs starting at once take before they look at, and mount, NSPAWN_RUNTIME. */
export const NSPAWN_RUNTIME_LOCK = '/run/hardway-nspawn-runtime.lock';

/** What mounting the nspawn runtime touches (a test passes its own). */
export interface NspawnRuntimeDeps {
  lockFile: string;
  isMounted(): boolean;
  mount(): Promise<void>;
  pollMs?: number;
}

const HOST_RUNTIME: NspawnRuntimeDeps = {
  lockFile: NSPAWN_RUNTIME_LOCK,
  isMounted: () => isMountPoint(NSPAWN_RUNTIME),
  mount: async () => {
    mkdirSync(NSPAWN_RUNTIME, { recursive: true });
    await local`mount -t tmpfs -o mode=0755 tmpfs ${NSPAWN_RUNTIME}`;
  },
};

/**
 * Mounts a tmpfs on /run/systemd/nspawn unless one is there, under hardway's one file lock (the
 * project's, the lab's host settings' and the build caches'): two labs may start at once, and
 * the second must find the first one's mount, not mount another over it.
 */
export async function ensureNspawnRuntime(deps: NspawnRuntimeDeps = HOST_RUNTIME): Promise<void> {
  if (deps.isMounted()) return;
  await withFileLock(deps.lockFile, 'mount the nspawn runtime', async () => {
    if (!deps.isMounted()) await deps.mount();
  }, { pollMs: deps.pollMs ?? 100 });
}

/** The systemd-nspawn arguments that boot a machine on the lab bridge. */
export function nspawnArgs(root: string, m: LabMachine, bridge: string, containerdDir: string): string[] {
  return [
    '-D', root, '-b', '-M', m.unit, `--hostname=${m.hostname}`,
    '--register=no', '--keep-unit', `--network-bridge=${bridge}`, '--capability=all',
    '--console=pipe', '--resolv-conf=off', '--timezone=off', '--link-journal=no',
    // runc creates a session keyring per container; nspawn's seccomp filter refuses these calls
    // ("unable to join session keyring: operation not permitted").
    '--system-call-filter=add_key keyctl request_key',
    // containerd's overlayfs snapshotter cannot mount over the machine's overlay root ("failed to
    // mount rootfs component ... invalid argument"): its state lives on the host's filesystem.
    `--bind=${containerdDir}:/var/lib/containerd`,
  ];
}

/** Boots the machine detached, in cgroups of its own; returns the nspawn pid (also written to <mdir>/pid). */
export function startMachine(mdir: string, m: LabMachine, bridge: string): number {
  const p = machinePaths(mdir);
  // Leftovers of the machine's last boot first (a reboot starts nspawn again).
  removeMachineCgroups(m.unit);
  const cgroups = createMachineCgroups(m.unit);
  mkdirSync(p.containerd, { recursive: true, mode: 0o711 });
  const log = openSync(p.console, 'a');
  try {
    // The shell moves itself into the machine's cgroups, then becomes nspawn (same pid).
    const enter = 'for d in $HARDWAY_CGROUPS; do echo $$ > "$d/cgroup.procs" || exit 1; done; exec "$@"';
    const child = spawn('sh', ['-c', enter, 'sh', 'systemd-nspawn', ...nspawnArgs(p.root, m, bridge, p.containerd)], {
      env: { ...process.env, HARDWAY_CGROUPS: cgroups.join(' ') },
      detached: true, // own session: survives hardway exiting, and no terminal signals reach it
      stdio: ['ignore', log, log],
    });
    if (child.pid === undefined) throw new FailureError(`${m.hostname}: could not start systemd-nspawn`);
    child.unref();
    writeFileSync(p.pid, `${child.pid}\n`);
    return child.pid;
  } finally {
    closeSync(log);
  }
}

/** The recorded nspawn pid of a machine if that process is still this machine's nspawn. */
export function runningPid(mdir: string, m: LabMachine): number | undefined {
  const file = machinePaths(mdir).pid;
  if (!existsSync(file)) return undefined;
  const pid = Number(readFileSync(file, 'utf8').trim());
  return Number.isInteger(pid) && pid > 0 && isMachineProcess(pid, m.unit) ? pid : undefined;
}

/** True if pid is a live systemd-nspawn for this machine name (guards against a reused pid). */
export function isMachineProcess(pid: number, unit: string): boolean {
  try {
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    // Empty while the starting shell execs nspawn, but also for a zombie or a kernel thread (a
    // reused pid): alive only if it is the shell or nspawn, and not a zombie.
    if (cmdline === '') return /^\d+ \((sh|systemd-nspawn)\) [^Z]/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
    const argv = cmdline.split('\0');
    return argv.some((a) => a.endsWith('systemd-nspawn')) && argv.includes(unit);
  } catch {
    return false;
  }
}

/** Waits until the process is gone (or a zombie); true if it went within the timeout. */
export async function waitForExit(pid: number, unit: string, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!isMachineProcess(pid, unit)) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return !isMachineProcess(pid, unit);
}

/** Shuts the machine down cleanly (SIGTERM to nspawn), SIGKILL after the timeout; no-op if not running. */
export async function stopMachine(mdir: string, m: LabMachine, timeoutMs = 30_000): Promise<void> {
  const pid = runningPid(mdir, m);
  if (pid !== undefined) {
    const veth = await hostVeth(pid);
    signal(pid, 'SIGTERM');
    if (!(await waitForExit(pid, m.unit, timeoutMs))) {
      // Killing nspawn alone would orphan the machine's PID namespace: kill its init first.
      for (const child of childrenOf(pid)) signal(child, 'SIGKILL');
      signal(pid, 'SIGKILL');
      await waitForExit(pid, m.unit, 10_000);
    }
    // A start right after this one must find the machine's veth name free.
    if (veth !== undefined) await waitForVethGone(veth);
  }
  rmSync(machinePaths(mdir).pid, { force: true });
  removeMachineCgroups(m.unit);
}

function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // already gone
  }
}
