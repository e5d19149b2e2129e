// What the lab needs from the host before it changes anything: root, systemd-nspawn, debootstrap.
import { InputError } from '../errors.ts';
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
      'run it as root, e.g. sudo hardway lab up');
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
