// The preflight checks, as data: each names the probes of the registry it asks (they ride the
// facts batch of every other plan and check, so a no-op `up` asks each machine no more often) and
// judges their answers, purely, into what is wrong and what to do, or nothing. Only what hardway
// cannot put right itself and would otherwise fail on halfway through: swap is not among them,
// since worker-os turns it off (and control planes run no kubelet).
import type { Answers } from '../../engine/facts.ts';
import type { Inventory, Machine } from '../../inventory.ts';
import { SERVER } from '../../layout.ts';
import type { PreflightName } from '../../preflight-names.ts';
import type { ProbeRequest } from '../../probes/probe.ts';
import { aptSources, brNetfilterState, cgroupControllers, clock, freeKilobytes, installedPackages, listeners, pathsPresent } from '../../probes/system.ts';
import { workerPackages } from '../worker-os.ts';

/** What a failed check says: what is wrong, and what to do about it. */
export interface PreflightProblem {
  wrong: string;
  fix: string;
}

/** When the jumpbox asked (ms since the epoch, before and after the answer came): the clock check's reference. */
export interface AskedAt {
  before: number;
  after: number;
}

/** One preflight check: the machines it is for, the probes it asks, and its judgement of their answers. */
export interface PreflightCheck<T extends Record<string, ProbeRequest> = Record<string, ProbeRequest>> {
  name: PreflightName;
  appliesTo(m: Machine): boolean;
  asks(inv: Inventory, m: Machine): T;
  judge(answers: Answers<T>, ctx: { inventory: Inventory; machine: Machine; at: AskedAt }): PreflightProblem | undefined;
}

const check = <T extends Record<string, ProbeRequest>>(c: PreflightCheck<T>): PreflightCheck => c as unknown as PreflightCheck;
const workers = (m: Machine) => m.role === 'worker';
const controlPlanes = (m: Machine) => m.role === 'control-plane';

/** The clock may be this many seconds off the jumpbox's. */
export const CLOCK_SLACK_S = 5;
/** Free space etcd needs where it keeps its data: its default space quota, 2 GiB. */
export const ETCD_FREE_KB = 2 * 1024 * 1024;

/** The ports each component hardway runs listens on, on a machine of that role, with the process that may hold it. */
export function componentPorts(inv: Inventory, m: Machine): Array<{ port: number; owner: string }> {
  return m.role === 'control-plane'
    ? [{ port: inv.settings.apiPort, owner: 'kube-apiserver' }, { port: 2379, owner: 'etcd' }, { port: 2380, owner: 'etcd' }]
    : [{ port: 10250, owner: 'kubelet' }];
}

/** Every preflight check, in the order of PREFLIGHT_NAMES. */
export const PREFLIGHT: readonly PreflightCheck[] = [
  check({
    name: 'systemd',
    appliesTo: () => true,
    asks: () => ({ run: pathsPresent.ask(['/run/systemd/system']) }),
    judge: (a) => (a.run.has('/run/systemd/system') ? undefined : {
      wrong: 'systemd does not run this machine (no /run/systemd/system)',
      fix: 'hardway runs every component as a systemd unit: use a machine booted with systemd as PID 1 (Debian\'s default)',
    }),
  }),
  check({
    name: 'ports',
    appliesTo: () => true,
    asks: () => ({ listening: listeners.ask() }),
    judge: (a, { inventory, machine }) => {
      if (!a.listening) return undefined; // no ss: nothing to judge by
      const taken = componentPorts(inventory, machine).flatMap(({ port, owner }) => {
        const holders = a.listening!.get(port);
        return holders && !holders.includes(owner) ? [`${port} (${owner}'s) is held by ${holders.join(', ') || 'a process ss cannot name'}`] : [];
      });
      return taken.length ? { wrong: `port ${taken.join('; port ')}`, fix: 'stop that program or move it to another port (ss -ltnp shows it)' } : undefined;
    },
  }),
  check({
    name: 'br-netfilter',
    appliesTo: workers,
    asks: () => ({ state: brNetfilterState.ask() }),
    judge: (a) => (a.state === 'present' || a.state === 'loadable' ? undefined : {
      wrong: 'br_netfilter is neither loaded, built in, nor loadable (modprobe -n br_netfilter finds no module)',
      fix: 'install the kernel\'s modules (linux-image-*), or on a container load br_netfilter on its host: kube-proxy needs bridged traffic seen by iptables',
    }),
  }),
  check({
    name: 'clock',
    appliesTo: () => true,
    asks: () => ({ now: clock.ask() }),
    judge: (a, { at }) => {
      const there = Number(a.now.stdout.trim());
      if (!Number.isFinite(there) || a.now.code !== 0) return undefined;
      // `date +%s` drops the fraction: the machine's time lies in [there, there + 1).
      const behind = Math.floor(at.before / 1000) - (there + 1);
      const ahead = there - Math.ceil(at.after / 1000);
      const off = behind > CLOCK_SLACK_S ? `${behind} s behind` : ahead > CLOCK_SLACK_S ? `${ahead} s ahead of` : undefined;
      return off === undefined ? undefined : {
        wrong: `its clock is ${off} the jumpbox's`,
        fix: 'set the time right (timedatectl set-ntp true, or chrony) here or on the jumpbox: certificates issued now are not valid yet on a clock behind, and etcd\'s leases need clocks that agree',
      };
    },
  }),
  check({
    name: 'etcd-disk',
    appliesTo: controlPlanes,
    // etcd's data directory may not exist yet: the file system of the directory that holds it.
    asks: () => ({ free: freeKilobytes.ask(SERVER.etcdDataDir.replace(/\/[^/]+$/, '')) }),
    judge: (a) => (a.free === undefined || a.free >= ETCD_FREE_KB ? undefined : {
      wrong: `${(a.free / 1024).toFixed(0)} MiB free on the file system of /var/lib, where etcd keeps its data (2048 MiB wanted)`,
      fix: 'free some space there or grow the disk: etcd stops taking writes when its database cannot grow (its default quota is 2 GiB)',
    }),
  }),
  check({
    name: 'cgroups',
    appliesTo: workers,
    asks: () => ({ cgroups: cgroupControllers.ask() }),
    judge: (a) => {
      const missing = ['cpu', 'memory', 'pids'].filter((c) => !a.cgroups.controllers.has(c));
      return missing.length === 0 ? undefined : {
        wrong: `the cgroup controller(s) ${missing.join(', ')} are missing (cgroup v${a.cgroups.version})`,
        fix: 'the kubelet and containerd limit pods with them: boot with them enabled (e.g. cgroup_enable=memory on the kernel command line), or, in a container, delegate them to it',
      };
    },
  }),
  check({
    name: 'packages',
    appliesTo: workers,
    asks: (inv) => ({ installed: installedPackages.ask(workerPackages(inv)), apt: aptSources.ask() }),
    judge: (a, { inventory }) => {
      const missing = workerPackages(inventory).filter((p) => !a.installed.has(p));
      if (missing.length === 0 || (a.apt.apt && a.apt.sources > 0)) return undefined;
      return {
        wrong: `${missing.join(', ')} ${missing.length === 1 ? 'is' : 'are'} not installed and apt ${a.apt.apt ? 'has no source to install from' : 'is not there'}`,
        fix: `add an apt source (/etc/apt/sources.list) the machine can reach, or install ${missing.join(' ')} yourself: worker-os installs them with apt-get`,
      };
    },
  }),
];
