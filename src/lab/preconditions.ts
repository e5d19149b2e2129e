// What the lab needs from the host before it changes anything: root, systemd-nspawn, debootstrap.
import { accessSync, constants } from 'node:fs';
import { InputError } from '../errors.ts';
import type { LabPaths } from './names.ts';
import { tryLocal } from '../transport/local.ts';

/** The apt-get line that installs what the lab needs on a Debian host. */
export const INSTALL_LINE = 'apt-get install -y systemd-container debootstrap iproute2 openssh-client';

const TOOLS: Array<{ cmd: string; pkg: string }> = [
  { cmd: 'systemd-nspawn', pkg: 'systemd-container' },
  { cmd: 'debootstrap', pkg: 'debootstrap' },
  { cmd: 'ip', pkg: 'iproute2' },
  { cmd: 'ssh', pkg: 'openssh-client' },
  { cmd: 'ssh-keygen', pkg: 'openssh-client' },
];

/** Throws an InputError (exit 2) naming what is missing and the apt-get line that fixes it. */
export async function checkLabHost(uid: number = process.getuid?.() ?? -1): Promise<void> {
  if (uid !== 0) {
    throw new InputError('the lab needs root (it mounts overlays, creates a bridge and runs systemd-nspawn)',
      'run it as root (sudo)');
  }
  const missing: string[] = [];
  for (const t of TOOLS) {
    const r = await tryLocal`sh -c ${'command -v "$1"'} sh ${t.cmd}`;
    if (r.code !== 0) missing.push(`${t.cmd} (package ${t.pkg})`);
  }
  if (missing.length > 0) {
    throw new InputError(`the lab needs ${missing.join(', ')}, not found on this host`, `install them: ${INSTALL_LINE}`);
  }
}

/**
 * Why this user cannot run a lab command, or undefined when it can. `changes`: the command changes
 * the host (boots, stops, mounts: root only); else it only reads the labs' state, which is
 * readable by root only where hardway keeps it by default (/var/lib/hardway/labs).
 */
export function labAccessProblem(paths: LabPaths, changes: boolean, uid: number = process.getuid?.() ?? -1): string | undefined {
  if (uid === 0) return undefined;
  if (changes) return 'the lab mounts overlays, creates a bridge and runs systemd-nspawn';
  try {
    accessSync(paths.stateRoot, constants.R_OK | constants.X_OK);
    return undefined;
  } catch (e) {
    // No state root at all: there is no lab, which the command says itself.
    return (e as NodeJS.ErrnoException).code === 'ENOENT' ? undefined : `the labs' state in ${paths.stateRoot} is readable by root only`;
  }
}
