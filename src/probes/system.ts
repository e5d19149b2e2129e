// Probes of the operating system: packages, swap, kernel settings, files and directories as the
// steps that install or remove them need to know (the scheduled etcd snapshots among them: files,
// read by etcdctl on the machine, not etcd asked), and the machine's clock.
import { sh, type Command } from '../shell.ts';
import { probe } from './probe.ts';

/** Debian packages that are installed, of those named (one dpkg-query for all). */
export const installedPackages = probe('installed-packages', (packages: readonly string[]) => sh`dpkg-query -W -f='\${Package} \${Status}\\n' ${packages} 2>/dev/null`,
  (a) => new Set(a.stdout.split('\n').filter((l) => / ok installed$/.test(l)).map((l) => l.split(' ')[0]!)));

/**
 * The swap devices in use, as /proc/swaps names them, on one line (space-separated): a `read` loop
 * in the facts shell, where `swapon --show` started a process. `file` is another copy (tests).
 */
export function swapNamesCommand(file = '/proc/swaps'): Command {
  // The first line is the header; a name's spaces are escaped (\040) by the kernel.
  return sh`h=; while read -r n _; do [ -z "$h" ] || printf '%s ' "$n"; h=1; done < ${file}; :`;
}

/** The swap devices in use. */
export const swapDevices = probe('swap-devices', () => swapNamesCommand(), (a) => a.stdout.split(/\s+/).filter(Boolean));

/**
 * How many lines of `file` mount swap, counted by a `read` loop (no grep process): the lines the
 * worker-os step's sed comments out, a line whose first field does not start with `#` and whose
 * third is `swap` followed by white space (more fields, or white space at the end).
 */
export function fstabSwapCountCommand(file = '/etc/fstab'): Command {
  return sh`c=0; set -f; while IFS= read -r l || [ -n "$l" ]; do set -- $l; case $1 in ''|'#'*) continue ;; esac; case $3 in swap) if [ $# -gt 3 ]; then c=$((c + 1)); else case $l in *[[:space:]]) c=$((c + 1)) ;; esac; fi ;; swap[[:space:]]*) c=$((c + 1)) ;; esac; done < ${file}; echo $c`;
}

/** How many lines of /etc/fstab mount swap. */
export const fstabSwapLines = probe('fstab-swap-lines', () => fstabSwapCountCommand(), (a) => Number(a.stdout.trim()) || 0);

/** How many lines of /etc/fstab carry `note` (lines hardway commented out). */
export const fstabLinesWith = probe('fstab-lines-with', (note: string) => sh`grep -cF -- ${note} /etc/fstab 2>/dev/null`, (a) => Number(a.stdout.trim()) || 0);

/** Whether bridged traffic can be seen by iptables at all (br_netfilter loaded or built in). */
export const brNetfilterPresent = probe('br-netfilter', () => sh`test -e /proc/sys/net/bridge/bridge-nf-call-iptables && echo present`, (a) => a.stdout.trim() === 'present');

/** Kernel settings by key from `sysctl KEY...` lines (`KEY = VALUE`; `KEY VALUE` read too); a key that does not exist has none. */
export function parseSysctls(text: string): Map<string, string> {
  return new Map(text.split('\n').map((l) => l.trim()).filter(Boolean).map((l): [string, string] => {
    const [k, v] = l.split(/\s*=\s*|\s+/);
    return [k!, v ?? ''];
  }));
}

/** The values of kernel settings, by key (a setting that does not exist is left out): the one sysctl read of worker-os, doctor and the bundle. */
export const sysctls = probe('sysctls', (keys: readonly string[]) => sh`sysctl ${keys} 2>/dev/null; :`, (a) => parseSysctls(a.stdout));

/** Which of `paths` exist (one `ls -1d`). */
export const pathsPresent = probe('paths-present', (paths: readonly string[]) => sh`ls -1d -- ${paths} 2>/dev/null; :`, (a) => new Set(a.stdout.split('\n').filter(Boolean)));

/** Every entry of each of `dirs` (one `find`), as paths. */
export const dirEntries = probe('dir-entries', (dirs: readonly string[]) => sh`find ${dirs} -mindepth 1 -maxdepth 1 2>/dev/null; :`, (a) => a.stdout.split('\n').filter(Boolean));

/** The names in a directory, hidden ones too (none when it does not exist). */
export const dirNames = probe('dir-names', (dir: string) => sh`ls -1A ${dir} 2>/dev/null; :`, (a) => a.stdout.split('\n').filter(Boolean));

/** The mount points, as /proc/self/mounts escapes them. */
export const mountPoints = probe('mount-points', () => sh`cut -d ' ' -f 2 /proc/self/mounts`, (a) => a.stdout.split('\n').filter(Boolean));

/** A path's mode in octal ('' when it does not exist). */
export const pathMode = probe('path-mode', (path: string) => sh`stat -c %a ${path} 2>/dev/null`, (a) => a.stdout.trim());

/** Whether a file is there and executable. */
export const executable = probe('executable', (path: string) => sh`test -x ${path}`, (a) => a.code === 0);

/** The machine's clock, in seconds since the epoch. */
export const clock = probe('clock', () => sh`date +%s`);

/** One scheduled snapshot on the machine that takes them: its file name, size and the revision it holds. */
export interface ScheduledSnapshot {
  name: string;
  /** When it was taken (UTC), from its name. */
  time: Date;
  size: number;
  /** etcdctl snapshot status's revision; undefined when etcdctl could not read the file. */
  revision?: number;
}

/** The names the snapshot script gives: etcd-snapshot-<UTC stamp>.db. */
export const SCHEDULED_NAME = /^etcd-snapshot-(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z\.db$/;

/**
 * `NAME SIZE REVISION` for each scheduled snapshot in `dir` (REVISION `-` when etcdctl cannot read
 * it); nothing when the directory does not exist. The revision is read by etcdctl on the machine.
 */
export function scheduledSnapshotsCommand(dir: string, etcdctlPath: string): Command {
  return sh`cd ${dir} 2>/dev/null || exit 0; for f in etcd-snapshot-*.db; do [ -f "$f" ] || continue; r=$(ETCDCTL_API=3 ${etcdctlPath} snapshot status "$f" -w json 2>/dev/null | sed -n 's/.*"revision":\\([0-9]*\\).*/\\1/p'); echo "$f $(stat -c %s "$f") \${r:--}"; done; :`;
}

/** Parses scheduledSnapshotsCommand's lines, newest first (lines that are not a snapshot's are left out). */
export function parseScheduledSnapshots(text: string): ScheduledSnapshot[] {
  return text.split('\n').flatMap((line) => {
    const [name, size, revision] = line.trim().split(/\s+/);
    const m = name ? SCHEDULED_NAME.exec(name) : null;
    if (!m || !/^\d+$/.test(size ?? '')) return [];
    const time = new Date(Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!));
    return [{ name: name!, time, size: Number(size), ...(/^\d+$/.test(revision ?? '') ? { revision: Number(revision) } : {}) }];
  }).sort((a, b) => b.name.localeCompare(a.name));
}

/** The scheduled snapshots of the machine that takes them, newest first. */
export const scheduledSnapshots = probe('scheduled-snapshots', (dir: string, etcdctlPath: string) => scheduledSnapshotsCommand(dir, etcdctlPath), (a) => parseScheduledSnapshots(a.stdout));

/**
 * The listening TCP sockets and who holds them (`ss -Hltnp`: State Recv-Q Send-Q Local Peer
 * Process), by port: the process names of each (`users:(("etcd",pid=..))`). `ss-missing` alone
 * when the machine has no ss (iproute2), which the ports check then cannot judge.
 */
export function parseListeners(text: string): Map<number, string[]> | undefined {
  if (text.trim() === 'ss-missing') return undefined;
  const out = new Map<number, string[]>();
  for (const line of text.split('\n')) {
    const local = line.trim().split(/\s+/)[3];
    const port = local ? Number(local.slice(local.lastIndexOf(':') + 1)) : NaN;
    if (!Number.isInteger(port)) continue;
    const names = [...line.matchAll(/\("([^"]+)",pid=/g)].map((m) => m[1]!);
    out.set(port, [...new Set([...(out.get(port) ?? []), ...names])]);
  }
  return out;
}

/** Who listens on which TCP port (undefined without ss). */
export const listeners = probe('listeners', () => sh`command -v ss >/dev/null || { echo ss-missing; exit 0; }; ss -Hltnp 2>/dev/null; :`, (a) => parseListeners(a.stdout));

/** Whether br_netfilter is there (`present`: loaded or built in), can be loaded (`loadable`: modprobe finds it), or neither (''). */
export const brNetfilterState = probe('br-netfilter-state', () =>
  sh`if [ -e /proc/sys/net/bridge/bridge-nf-call-iptables ]; then echo present; elif modprobe -n br_netfilter >/dev/null 2>&1; then echo loadable; fi; :`, (a) => a.stdout.trim());

/** Kilobytes free (for root) on the file system that holds `path` (`df -Pk`); undefined when df cannot say. */
export const freeKilobytes = probe('free-kilobytes', (path: string) => sh`df -Pk ${path} 2>/dev/null`, (a) => {
  const n = Number(a.stdout.trim().split('\n')[1]?.trim().split(/\s+/)[3]);
  return Number.isFinite(n) ? n : undefined;
});

/**
 * The cgroup controllers the machine offers: `v2 cpu memory pids ...` from the unified
 * hierarchy's cgroup.controllers (read by the shell, no process), or `v1 cpu memory ...` from the
 * hierarchies mounted under /sys/fs/cgroup. `root` is another copy (tests).
 */
export function cgroupControllersCommand(root = '/sys/fs/cgroup'): Command {
  return sh`if [ -f ${root}/cgroup.controllers ]; then c=; read -r c < ${root}/cgroup.controllers; echo "v2 $c"; else printf v1; for d in ${root}/*; do [ -d "$d" ] && printf ' %s' "\${d##*/}"; done; echo; fi; :`;
}

/** The cgroup version and its controllers (on v1, `cpu,cpuacct` counts as both). */
export const cgroupControllers = probe('cgroup-controllers', () => cgroupControllersCommand(), (a) => {
  const [version, ...names] = a.stdout.trim().split(/\s+/);
  return { version: version === 'v2' ? 2 : 1, controllers: new Set(names.flatMap((n) => n.split(','))) };
});

/** How many apt sources the machine has (deb lines and deb822 URIs: lines), and whether apt-get is there. */
export const aptSources = probe('apt-sources', () =>
  sh`command -v apt-get >/dev/null && echo apt; cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources 2>/dev/null | grep -cE '^[[:space:]]*(deb[[:space:]]|URIs:)'; :`,
  (a) => ({ apt: /^apt$/m.test(a.stdout), sources: Number(/^(\d+)$/m.exec(a.stdout)?.[1] ?? 0) }));
