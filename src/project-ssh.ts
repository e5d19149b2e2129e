// What a provider of machines (the lab, Multipass) writes into a project directory so that
// `cd DIR && hardway ...` and `ssh -F DIR/ssh_config node-0` work with no flags: one set of file
// names, the project's key pair, and ssh_config blocks with strict host keys.
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Document } from 'yaml';
import { narrowModeNoFollow, writeFilesInside } from './output-file.ts';
import { local } from './transport/local.ts';

/** File names inside a project directory written by `lab up` or `multipass up`. */
export const PROJECT_FILES = {
  machines: 'machines.txt',
  cluster: 'cluster.yaml',
  key: 'id_ed25519',
  knownHosts: 'known_hosts',
  sshConfig: 'ssh_config',
} as const;

/** A path as ssh_config reads it: quoted when it has blanks. */
export function configPath(path: string): string {
  return /[\s"]/.test(path) ? `"${path.replace(/"/g, '')}"` : path;
}

/** One `Host` block: root (or the login user) with the project key, strict host keys against DIR/known_hosts. */
export function sshHostBlock(names: readonly string[], ip: string, dir: string, user = 'root'): string {
  return [
    `Host ${[...names, ip].join(' ')}`,
    `  HostName ${ip}`,
    `  User ${user}`,
    `  IdentityFile ${configPath(join(dir, PROJECT_FILES.key))}`,
    '  IdentitiesOnly yes',
    `  UserKnownHostsFile ${configPath(join(dir, PROJECT_FILES.knownHosts))}`,
    '  StrictHostKeyChecking yes',
    '  ConnectTimeout 5',
  ].join('\n');
}

/** Writes the project's text files (machines.txt, cluster.yaml, known_hosts, ssh_config) into DIR, 0644, all at once and never through a link. */
export function writeProjectFiles(dir: string, files: Record<string, string>): void {
  const root = { dir, dirMode: 0o755, hint: `hardway writes the project's files into ${dir} itself, never through a link: remove the link (hardway writes the file)` };
  writeFilesInside(root, Object.entries(files).map(([path, content]) => ({ path, content, mode: 0o644 })));
}

/**
 * cluster.yaml's key for an even number of control-plane machines, set when a provider (lab,
 * Multipass) was asked for that many: the user chose it (hardway refuses it otherwise, see inventory).
 */
export function askedForEvenControlPlanes(doc: Document, servers: number): void {
  if (servers % 2 === 0) doc.set('evenControlPlanes', true);
}

/** Makes DIR/id_ed25519 (0600) unless a pair is there; returns the public key. */
export async function ensureKeyPair(dir: string, comment: string): Promise<string> {
  mkdirSync(dir, { recursive: true });
  const key = join(dir, PROJECT_FILES.key);
  if (!existsSync(key) || !existsSync(`${key}.pub`)) {
    rmSync(key, { force: true });
    rmSync(`${key}.pub`, { force: true });
    await local`ssh-keygen -q -t ed25519 -N ${''} -C ${comment} -f ${key}`;
  }
  // Never through a link: a link's target is refused, not chmod-ed.
  narrowModeNoFollow(key, 0o600, `${PROJECT_FILES.key} is the project's private key: make it a file of its own`);
  return readFileSync(`${key}.pub`, 'utf8').trim();
}
