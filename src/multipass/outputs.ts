// What `multipass up` writes into DIR so that `cd DIR && hardway ...` and `ssh -F DIR/ssh_config
// node-0` work with no flags: machines.txt, cluster.yaml, known_hosts, ssh_config (and the key,
// keys.ts). Content functions are pure; writeFiles puts them on disk.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseDocument } from 'yaml';
import { InputError } from '../errors.ts';
import { askedForEvenControlPlanes, configPath, PROJECT_FILES, sshHostBlock, writeProjectFiles } from '../project-ssh.ts';
import type { PlannedVm } from './types.ts';

/** File names inside DIR (the same as a lab's). */
export const FILES = PROJECT_FILES;

/** A VM with its address and public host key: what the files describe. */
export interface AddressedVm extends PlannedVm {
  ip: string;
  hostKey: string;
}

/** The first line of machines.txt and ssh_config, which also tells that hardway multipass wrote them. */
export function header(prefix: string): string {
  return `# Multipass "${prefix}" (hardway multipass up)`;
}

/** machines.txt in the Kubernetes the Hard Way format: IP FQDN HOSTNAME [POD_SUBNET]. */
export function machinesTxt(prefix: string, vms: AddressedVm[]): string {
  const lines = vms.map((m) => [m.ip, m.fqdn, m.hostname, m.podSubnet].filter(Boolean).join(' '));
  return `${header(prefix)}: IP FQDN HOSTNAME [POD_SUBNET]\n${lines.join('\n')}\n`;
}

/** Addresses by hostname in a machines.txt (comments and blank lines skipped). */
export function machinesTxtAddresses(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of text.split('\n')) {
    const [ip, , hostname] = line.replace(/#.*/, '').trim().split(/\s+/);
    if (ip && hostname) out.set(hostname, ip);
  }
  return out;
}

/** cluster.yaml with the SSH settings for the VMs; other keys of an existing file are kept. */
export function clusterYaml(existing: string | undefined, prefix: string, servers = 1): string {
  const doc = parseDocument(existing ?? `# cluster.yaml: settings for every machine of Multipass "${prefix}" (see hardway inventory)\n`);
  askedForEvenControlPlanes(doc, servers);
  doc.setIn(['ssh', 'user'], 'root');
  doc.setIn(['ssh', 'identityFile'], FILES.key);
  doc.setIn(['ssh', 'knownHosts'], FILES.knownHosts);
  return doc.toString();
}

/** known_hosts pinning each VM's host key under its IP, hostname, FQDN and Multipass name. */
export function knownHosts(vms: AddressedVm[]): string {
  return vms.map((m) => {
    const [type, key] = m.hostKey.split(/\s+/);
    return `${m.ip},${m.hostname},${m.fqdn},${m.vm} ${type} ${key}`;
  }).join('\n') + '\n';
}

/** ssh_config for `ssh -F DIR/ssh_config node-0`: root, the project key, strict host keys against DIR/known_hosts. */
export function sshConfig(prefix: string, vms: AddressedVm[], dir: string): string {
  const blocks = vms.map((m) => sshHostBlock([m.hostname, m.fqdn, m.vm], m.ip, dir));
  return `${header(prefix)}. Use: ssh -F ${configPath(join(dir, FILES.sshConfig))} ${vms.at(-1)?.hostname ?? 'node-0'}\n\n${blocks.join('\n\n')}\n`;
}

/** Refuses a DIR whose machines.txt or ssh_config was not written by `multipass up` for this prefix. */
export function checkDirIsOurs(dir: string, prefix: string): void {
  for (const name of [FILES.machines, FILES.sshConfig]) {
    const file = join(dir, name);
    if (!existsSync(file)) continue;
    const first = readFileSync(file, 'utf8').split('\n')[0] ?? '';
    if (first.startsWith(header(prefix))) continue;
    const other = /^# Multipass "([^"]+)"/.exec(first)?.[1];
    throw new InputError(
      other ? `${file} belongs to Multipass "${other}", not "${prefix}"` : `${file} exists and was not written by hardway multipass up; it would be overwritten`,
      other ? `pass --name ${other}, or choose another directory with --dir` : 'choose another directory with --dir, or move that file away');
  }
}

/** Writes machines.txt, cluster.yaml, known_hosts and ssh_config into DIR (each whole: temp file + rename). */
export function writeFiles(dir: string, prefix: string, vms: AddressedVm[]): void {
  const clusterFile = join(dir, FILES.cluster);
  const servers = vms.filter((v) => v.role === 'control-plane').length;
  writeProjectFiles(dir, {
    [FILES.machines]: machinesTxt(prefix, vms),
    [FILES.cluster]: clusterYaml(existsSync(clusterFile) ? readFileSync(clusterFile, 'utf8') : undefined, prefix, servers),
    [FILES.knownHosts]: knownHosts(vms),
    [FILES.sshConfig]: sshConfig(prefix, vms, dir),
  });
}
