// Per-host limits that a large lab runs into, computed from the number of lab machines on the host.
// Every machine is a full systemd (plus containerd and a kubelet on a cluster) sharing one kernel
// and, without user namespaces, one root user: limits meant for one host's worth of processes are
// met at a few dozen machines. Seen at 33 machines with fs.inotify.max_user_instances 128: 11 of
// them logged "Failed to create inotify object: Too many open files" and never finished booting.
// Measured per idle machine: 7 inotify instances (systemd 5, logind, dbus), about 30 watches,
// about 10 threads; a worker running containerd, a kubelet and kube-proxy needs more of each.
import { readState, listLabs } from './state.ts';
import type { LabPaths } from './names.ts';
import type { HostSetting } from './host-settings.ts';

/** Headroom per machine, the host's own share included: generous, as a limit costs nothing until used. */
export const PER_MACHINE = {
  inotifyInstances: 32,
  inotifyWatches: 8192,
  keys: 20,
  keyBytes: 2000,
  pids: 1024,
} as const;

/**
 * The limits a host needs for `machines` lab machines in all, each "at least": a host that already
 * has a higher value keeps it. Up to 4 machines these are the kernel's defaults, so a small lab
 * changes nothing. Pure.
 */
export function largeLabSettings(machines: number): HostSetting[] {
  const n = Math.max(0, machines);
  const why = `${n} lab machine(s) on this host`;
  // The kernel's default, or the per-machine headroom times the machines, whichever is larger.
  const atLeast = (key: string, kernelDefault: number, perMachine: number, what: string): HostSetting =>
    ({ key, value: String(Math.max(kernelDefault, Math.ceil(perMachine * n))), why: `${what} of ${why}`, atLeast: true });
  // The ARP table (gc_thresh*) is one table for every network namespace: the host's bridge and
  // every machine's neighbours (the server, its peers, its pods) count against one limit.
  const neighbours = 2 * (n + 16);
  return [
    atLeast('fs.inotify.max_user_instances', 128, PER_MACHINE.inotifyInstances, 'inotify instances (systemd, logind, dbus, kubelet)'),
    atLeast('fs.inotify.max_user_watches', 65536, PER_MACHINE.inotifyWatches, 'inotify watches'),
    // runc gives every container a session keyring; services with User= get one per start too.
    atLeast('kernel.keys.maxkeys', 200, PER_MACHINE.keys, 'keyrings (runc, systemd)'),
    atLeast('kernel.keys.maxbytes', 20000, PER_MACHINE.keyBytes, 'keyrings (runc, systemd)'),
    atLeast('kernel.pid_max', 32768, PER_MACHINE.pids, 'processes and threads'),
    atLeast('kernel.threads-max', 32768, PER_MACHINE.pids, 'processes and threads'),
    // Raised largest first, so the three stay ordered while they change.
    atLeast('net.ipv4.neigh.default.gc_thresh3', 1024, neighbours, 'ARP entries (one table for every namespace)'),
    atLeast('net.ipv4.neigh.default.gc_thresh2', 512, neighbours / 2, 'ARP entries (one table for every namespace)'),
    atLeast('net.ipv4.neigh.default.gc_thresh1', 128, neighbours / 8, 'ARP entries (one table for every namespace)'),
  ];
}

/** Machines of every lab recorded on this host (the one coming up included, once its state is written). */
export function labMachinesOnHost(paths: LabPaths): number {
  return listLabs(paths).reduce((n, lab) => n + (readState(paths, lab)?.plan.machines.length ?? 0), 0);
}
