// The Debian 12 root filesystem every lab machine boots from: built once with debootstrap, fixed
// (see lab-notes: python3-cffi-backend), stripped of host identity, and cached as a directory that
// later labs mount read-only under their overlays. Built in a temporary directory and renamed into
// place only when complete, so a crash never leaves a half cache behind.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CommandError } from '../errors.ts';
import { hostMirror } from '../download/apt.ts';
import { sh } from '../shell.ts';
import { local, runCommand } from '../transport/local.ts';
import { mountsUnder, unmountAll } from './mounts.ts';

/** Debian release of the lab machines. */
export const SUITE = 'bookworm';
/** Bump when the recipe below changes in a way that changes the result: the cache key changes with it. */
export const RECIPE_VERSION = 1;
/**
 * Packages: systemd + sshd + cloud-init, and what the worker step checks (socat conntrack ipset kmod
 * iptables, and haproxy for a cluster of several control planes: the machines have no internet);
 * sudo, as cloud images have it, for `lab up --login-user`.
 */
export const PACKAGES = [
  'systemd', 'systemd-sysv', 'dbus', 'openssh-server', 'iproute2', 'iptables', 'kmod', 'cloud-init',
  'procps', 'conntrack', 'socat', 'ipset', 'ca-certificates', 'haproxy', 'sudo',
] as const;

/** Where the cached root for the current recipe lives: <cacheRoot>/rootfs-<hash>. */
export function rootfsPath(cacheRoot: string): string {
  const key = JSON.stringify({ suite: SUITE, packages: [...PACKAGES].sort(), recipe: RECIPE_VERSION });
  return join(cacheRoot, `rootfs-${createHash('sha256').update(key).digest('hex').slice(0, 16)}`);
}

/** Returns the cached root, building it first if needed. `report` receives progress lines. */
export async function ensureRootfs(cacheRoot: string, report: (line: string) => void): Promise<string> {
  const final = rootfsPath(cacheRoot);
  if (existsSync(final)) return final;
  mkdirSync(cacheRoot, { recursive: true });
  await removeAbandonedBuilds(cacheRoot);
  const tmp = join(cacheRoot, `.build-${process.pid}-${final.split('/').pop()}`);
  try {
    await debootstrap(tmp, hostMirror(), report);
    await finishRootfs(tmp, report);
    if (existsSync(final)) return final; // another `lab up` finished first; ours is discarded below
    renameSync(tmp, final);
    return final;
  } finally {
    if (existsSync(tmp)) {
      await unmountAll(tmp);
      rmSync(tmp, { recursive: true, force: true });
    }
  }
}

async function debootstrap(dir: string, mirror: string, report: (line: string) => void): Promise<void> {
  report(`debootstrap ${SUITE} from ${mirror} (about 3-4 minutes, once)`);
  const args = ['--variant=minbase', `--include=${PACKAGES.join(',')}`, SUITE, dir, mirror];
  const out = await runCommand(sh`debootstrap ${args}`, {
    onStdout: (chunk) => {
      const last = chunk.toString().trim().split('\n').pop();
      if (last) report(last);
    },
  });
  // debootstrap ends with "Failure while configuring base packages" because it cannot resolve the
  // virtual package python3-cffi-backend provides; finishRootfs repairs that. Anything that did not
  // even unpack a base system is a real failure.
  if (out.code !== 0 && !existsSync(join(dir, 'usr/bin/dpkg'))) {
    throw new CommandError('local', `debootstrap ${args.join(' ')}`, out.code, out.stderr || out.stdout.slice(-2000));
  }
}

/** Repairs the half-configured packages and removes host identity, so each machine gets its own. */
export async function finishRootfs(dir: string, report: (line: string) => void): Promise<void> {
  report('installing python3-cffi-backend and configuring the remaining packages');
  const chrootEnv = ['env', 'DEBIAN_FRONTEND=noninteractive', 'LC_ALL=C'];
  await local`mount --bind /proc ${join(dir, 'proc')}`;
  try {
    writeFileSync(join(dir, 'etc/resolv.conf'), readFileSync('/etc/resolv.conf'));
    await local`chroot ${dir} ${chrootEnv} apt-get install -y python3-cffi-backend`;
    await local`chroot ${dir} ${chrootEnv} dpkg --configure -a`;
    const audit = await local`chroot ${dir} dpkg --audit`;
    if (audit.trim() !== '') throw new CommandError('local', `chroot ${dir} dpkg --audit`, 1, audit);
    await local`chroot ${dir} ${chrootEnv} apt-get clean`;
    // Installed, not running: as on a machine where nobody installed it, until the api-proxy step
    // (several control planes) gives it its config and enables it.
    await local`chroot ${dir} systemctl disable haproxy.service`;
  } finally {
    await local`umount ${join(dir, 'proc')}`;
  }
  report('removing host identity (hostname, machine-id, SSH host keys)');
  for (const f of readdirSync(join(dir, 'etc/ssh')).filter((n) => n.startsWith('ssh_host_'))) {
    rmSync(join(dir, 'etc/ssh', f));
  }
  writeFileSync(join(dir, 'etc/machine-id'), ''); // empty: systemd gives each machine its own at boot
  rmSync(join(dir, 'var/lib/dbus/machine-id'), { force: true });
  writeFileSync(join(dir, 'etc/hostname'), '');
  writeFileSync(join(dir, 'etc/resolv.conf'), ''); // no resolver: nothing in the lab leaves it
  rmSync(join(dir, 'var/lib/cloud'), { recursive: true, force: true });
  rmSync(join(dir, 'debootstrap'), { recursive: true, force: true });
}

/** Removes builds left by a crashed `lab up` (their process is gone), unmounting /proc first. */
export async function removeAbandonedBuilds(cacheRoot: string): Promise<void> {
  if (!existsSync(cacheRoot)) return;
  for (const name of readdirSync(cacheRoot)) {
    const m = /^\.build-(\d+)-/.exec(name);
    if (!m || existsSync(`/proc/${m[1]}`)) continue;
    const dir = join(cacheRoot, name);
    await unmountAll(dir);
    if (mountsUnder(dir).length === 0) rmSync(dir, { recursive: true, force: true });
  }
}
