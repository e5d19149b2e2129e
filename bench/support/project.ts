// A fresh lab made ready for `hardway up` the way the README's demo does it: lab up, binaries from
// Debian packages and the Kubernetes server binaries built from Debian's source package (`hardway
// download --source debian`), the offline images (CoreDNS among them), and pki/ made beforehand (so the timed `up` is the
// push, not RSA key generation).
import { mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseDocument } from 'yaml';
import { loadInventory } from '../../src/inventory.ts';
import { hardway, mustSucceed } from './run.ts';
import { useCorednsSource } from '../../scripts/coredns-source.ts';

/** A lab with its project directory. */
export interface BenchLab {
  name: string;
  dir: string;
  sshConfig: string;
  /** Hostnames in inventory order. */
  hosts: string[];
  labUpSeconds: number;
}

/** `hardway lab down --name NAME --yes`; a lab that is not there is fine. */
export async function labDown(name: string): Promise<void> {
  mustSucceed(await hardway(['lab', 'down', '--name', name, '--yes'], { stoppable: false }), `hardway lab down --name ${name} --yes`);
}

/** A new temporary project directory for a lab. */
export function labDir(name: string): string {
  return mkdtempSync(join(tmpdir(), `hardway-${name}-`));
}

/** Takes down a leftover of the same name, then starts a fresh lab with its files in DIR (made as cloud images come with `loginUser`). */
export async function freshLab(name: string, subnet: string, workers: number, dir: string, loginUser?: string): Promise<BenchLab> {
  await labDown(name);
  const up = mustSucceed(await hardway(['lab', 'up', '--name', name, '--subnet', subnet, '--servers', '1',
    '--workers', String(workers), '--dir', dir, ...(loginUser ? ['--login-user', loginUser] : [])]), `hardway lab up --name ${name}`);
  const hosts = loadInventory(join(dir, 'machines.txt')).machines.map((m) => m.hostname);
  return { name, dir, sshConfig: join(dir, 'ssh_config'), hosts, labUpSeconds: up.seconds };
}

/** Fills downloads/ (Debian packages, Kubernetes built from source), images/ and pki/; returns the seconds each took. */
export async function prepareProject(dir: string): Promise<{ downloadSeconds: number; pkiSeconds: number }> {
  // CoreDNS for v1.20 is built offline from the upstream source archive beside the checkout.
  useCorednsSource(dir);
  const dl = mustSucceed(await hardway(['download', '--source', 'debian'], { cwd: dir }), 'hardway download --source debian');
  mustSucceed(await hardway(['build-images'], { cwd: dir }), 'hardway build-images');
  let pkiSeconds = 0;
  for (const cmd of ['certs', 'kubeconfigs', 'encryption-config']) {
    pkiSeconds += mustSucceed(await hardway([cmd], { cwd: dir }), `hardway ${cmd}`).seconds;
  }
  return { downloadSeconds: dl.seconds, pkiSeconds };
}

/** Log files under DIR/logs, oldest first (names start with the run's ISO time). */
export function runLogs(dir: string): string[] {
  try {
    return readdirSync(join(dir, 'logs')).filter((f) => f.endsWith('.log')).sort().map((f) => join(dir, 'logs', f));
  } catch {
    return [];
  }
}

/** The one log a run added to DIR/logs. */
export function newLog(before: string[], dir: string): string {
  const added = runLogs(dir).filter((f) => !before.includes(f));
  if (added.length !== 1) throw new Error(`expected one new run log in ${dir}/logs, found ${added.length}`);
  if (statSync(added[0]!).size === 0) throw new Error(`${added[0]} is empty`);
  return added[0]!;
}

/** dns.enabled in DIR/cluster.yaml: false turns the add-on off, true removes the key (the default, on). */
export function setDns(dir: string, enabled: boolean): void {
  const file = join(dir, 'cluster.yaml');
  const doc = parseDocument(readFileSync(file, 'utf8'));
  if (enabled) doc.deleteIn(['dns', 'enabled']);
  else doc.setIn(['dns', 'enabled'], false);
  writeFileSync(file, String(doc));
}
