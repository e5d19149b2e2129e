// The cloud-init user-data hardway gives each VM it launches. Multipass appends its own key to
// ssh_authorized_keys (daemon.cpp, prepare_user_data), so `multipass shell` keeps working. Pure.
import { stringify } from 'yaml';
import type { VmRecord } from './types.ts';

/** The file hardway writes into every VM it launches: the marker `down` checks before deleting. */
export const MARKER_FILE = '/etc/hardway/multipass-vm';

/** An SSH key pair in OpenSSH format. */
export interface KeyPair {
  privateKey: string;
  publicKey: string;
}

/** The marker file's content: which prefix, VM and launch it belongs to. */
export function markerText(prefix: string, vm: VmRecord): string {
  return `# Written by hardway multipass up: this VM was launched by hardway.\nprefix=${prefix}\nvm=${vm.vm}\nid=${vm.id}\n`;
}

/** Reads a marker file; fields absent from it are undefined. */
export function parseMarker(text: string): { prefix?: string; vm?: string; id?: string } {
  const field = (k: string) => new RegExp(`^${k}=(\\S+)$`, 'm').exec(text)?.[1];
  return { prefix: field('prefix'), vm: field('vm'), id: field('id') };
}

/**
 * The user-data of one VM: its hostname and FQDN, root's key (root, because hardway's steps run as
 * root), the host key hardway made for it (so known_hosts is written before the first connection),
 * cloud-init owning /etc/hosts as Multipass users have it, and the marker.
 */
export function userData(prefix: string, vm: VmRecord, authorizedKey: string, hostKey: KeyPair): string {
  const config = {
    hostname: vm.hostname,
    fqdn: vm.fqdn,
    manage_etc_hosts: true,
    // Keys go to the default user (ubuntu) and, with disable_root false, to root without the
    // "Please login as the user ubuntu" command that cloud-init puts in front of them otherwise.
    disable_root: false,
    ssh_authorized_keys: [authorizedKey.trim()],
    // The image's own host keys are deleted and this one is the only one sshd presents.
    ssh_deletekeys: true,
    // Both as ssh-keygen writes them, newline-terminated: cloud-init writes the files as given.
    ssh_keys: { ed25519_private: hostKey.privateKey.trimEnd() + '\n', ed25519_public: hostKey.publicKey.trim() + '\n' },
    write_files: [{ path: MARKER_FILE, permissions: '0644', owner: 'root:root', content: markerText(prefix, vm) }],
  };
  return [
    '#cloud-config',
    `# Written by hardway multipass up for ${vm.vm}. It holds the VM's SSH host key: keep it private.`,
    stringify(config, { lineWidth: 0 }),
  ].join('\n');
}
