// The keys `multipass up` makes with ssh-keygen: the project's key pair in DIR (root's login on
// every VM) and one host key per VM, generated here so its public half is pinned in known_hosts
// before the VM exists: no trust on first use.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { local } from '../transport/local.ts';
import { ensureKeyPair } from '../project-ssh.ts';
import type { KeyPair } from './user-data.ts';

/** A fresh ed25519 key pair; the private half exists only in memory and in the user-data. */
export async function generateHostKey(comment: string): Promise<KeyPair> {
  const dir = mkdtempSync(join(tmpdir(), 'hardway-hostkey-'));
  try {
    const file = join(dir, 'key');
    await local`ssh-keygen -q -t ed25519 -N ${''} -C ${comment} -f ${file}`;
    return { privateKey: readFileSync(file, 'utf8'), publicKey: readFileSync(`${file}.pub`, 'utf8').trim() };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Makes DIR/id_ed25519 (0600) unless a pair is there; returns the public key. */
export function ensureProjectKey(dir: string, prefix: string): Promise<string> {
  return ensureKeyPair(dir, `hardway-multipass-${prefix}`);
}
