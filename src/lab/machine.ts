// Prepares one lab machine on the host: its overlay over the cached root, and the files that make
// it itself (hostname, machine-id, fresh SSH host key, root's authorized key, address, seed).
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, lstatSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { local } from '../transport/local.ts';
import { ENABLED_UNITS, machineFiles, type NoCloudSeed } from './machine-config.ts';
import { isMountPoint } from './mounts.ts';
import type { LabMachine } from './types.ts';

/** The parts of a machine's state directory. */
export function machinePaths(mdir: string) {
  return {
    upper: join(mdir, 'upper'),
    work: join(mdir, 'work'),
    root: join(mdir, 'root'),
    pid: join(mdir, 'pid'),
    console: join(mdir, 'console.log'),
    /** /var/lib/containerd of the machine, on the host's filesystem (bound in by nspawn). */
    containerd: join(mdir, 'containerd'),
  };
}

/** Mounts the machine's overlay (if not mounted) and writes its identity; returns its public host key. */
export async function prepareMachine(opts: {
  mdir: string;
  lab: string;
  machine: LabMachine;
  prefix: number;
  rootfs: string;
  authorizedKey: string;
  /** A NoCloud seed from outside (the multipass test stand-in) instead of the lab's own. */
  seed?: NoCloudSeed;
  /** `lab up --login-user`: the user the lab key lets in instead of root. */
  loginUser?: string;
}): Promise<string> {
  const p = machinePaths(opts.mdir);
  for (const d of [p.upper, p.work, p.root]) mkdirSync(d, { recursive: true });
  if (!isMountPoint(p.root)) {
    await local`mount -t overlay overlay -o ${`lowerdir=${opts.rootfs},upperdir=${p.upper},workdir=${p.work}`} ${p.root}`;
  }
  for (const f of machineFiles(opts.lab, opts.machine, opts.prefix, opts.authorizedKey, opts.seed, opts.loginUser)) {
    const path = join(p.root, f.path);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, f.content, { mode: f.mode });
    chmodSync(path, f.mode);
  }
  if (existsSync(join(p.root, 'root/.ssh'))) chmodSync(join(p.root, 'root/.ssh'), 0o700);
  for (const u of ENABLED_UNITS) {
    const link = join(p.root, u.link);
    mkdirSync(dirname(link), { recursive: true });
    if (!existsSync(link) && !isSymlink(link)) symlinkSync(u.target, link);
  }
  // Identity made once per machine and kept across reboots and restarts of the lab.
  const machineId = join(p.root, 'etc/machine-id');
  if (readFileSync(machineId, 'utf8').trim() === '') writeFileSync(machineId, randomBytes(16).toString('hex') + '\n', { mode: 0o444 });
  const hostKey = join(p.root, 'etc/ssh/ssh_host_ed25519_key');
  if (!existsSync(hostKey)) {
    await local`ssh-keygen -q -t ed25519 -N ${''} -C ${`root@${opts.machine.hostname}`} -f ${hostKey}`;
  }
  return readFileSync(`${hostKey}.pub`, 'utf8').trim();
}

function isSymlink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}
