// `hardway doctor --bundle FILE.tar.gz`: what a person attaches to a bug report, in one archive:
// doctor's report (text and JSON, as it comes), the cluster's nodes, pods and recent events, and of
// every machine what bundle-machine.ts reads. Read-only on the machines; the only write is FILE.
// No secret goes in: nothing of pki/ but checksums, no kubeconfig, no key; and every text passes
// through the run's Redactor, given every secret pki/ holds (keys, kubeconfigs, the encryption key).
import { maskCredentials } from '../url.ts';
import { readFileSync, readlinkSync, realpathSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { gzipSync } from 'node:zlib';
import type { Inventory, Machine } from '../inventory.ts';
import { writeTar, type TarEntry } from '../images/tar.ts';
import { InputError, quote } from '../errors.ts';
import { kindOf } from '../input-file.ts';
import { lstatOrNothing, writeAtomic } from '../output-file.ts';
import type { Facts } from '../engine/facts.ts';
import { BUNDLE_TABLES, clusterTable, type TableRead } from '../probes/kubectl.ts';
import type { Connect } from '../transport/index.ts';
import { Semaphore } from '../transport/semaphore.ts';
import type { Redactor } from '../ui/redact.ts';
import { pkiRedactor } from './pki-redactor.ts';
import { jumpboxFacts, jumpboxKubectl, kubectlPath } from './api.ts';
import { machineBundle, type BundleText } from './bundle-machine.ts';

/** The directory every file of the bundle is under. */
export const BUNDLE_ROOT = 'hardway-doctor-bundle';

/** The most recent events kept. */
const EVENTS_KEPT = 300;

/** What the bundle is made of: doctor's report as it printed it, and what to ask. */
export interface BundleRequest {
  file: string;
  inventory: Inventory;
  machines: readonly Machine[];
  doctorText: string;
  doctorJson: string;
  connect: Connect;
  env: NodeJS.ProcessEnv;
  /** --force: replace a file already at `file`. */
  force?: boolean;
  /** Where paths in messages are shown from (default: the process's working directory). */
  cwd?: string;
}

/** The cluster's nodes, pods and recent events as kubectl prints them (the registry's cluster-table), asked on the jumpbox (`facts`: tests pass their own). */
export async function clusterBundle(inv: Inventory, env: NodeJS.ProcessEnv, facts: () => Facts = jumpboxFacts): Promise<BundleText[]> {
  const kubectl = kubectlPath(inv, env);
  if (!kubectl) return [{ path: 'cluster/error.txt', text: 'kubectl is not on PATH and not in downloads/client (run "hardway download")\n' }];
  const k = jumpboxKubectl(inv, kubectl);
  const get = async (path: string, table: keyof typeof BUNDLE_TABLES, tail?: number): Promise<BundleText> => {
    const r: TableRead = await facts().ask({ t: clusterTable.ask(k, table) }).then((a) => a.t, (e: Error) => ({ ok: false, code: 1, error: e.message }));
    if (!r.ok) return { path, text: `kubectl ${BUNDLE_TABLES[table].join(' ')}: exit ${r.code}\n${r.error}` };
    const lines = r.text.split('\n');
    const kept = tail !== undefined && lines.length > tail + 1 ? [lines[0]!, ...lines.slice(-tail - 1)] : lines;
    return { path, text: kept.join('\n') };
  };
  return Promise.all([
    get('cluster/nodes.txt', 'nodes'),
    get('cluster/pods.txt', 'pods'),
    get('cluster/events.txt', 'events', EVENTS_KEPT),
  ]);
}

/** The project's own inputs that say how the cluster was asked for (no secret in them; redacted all the same). */
function projectFiles(inv: Inventory): BundleText[] {
  return ['machines.txt', 'cluster.yaml'].flatMap((name) => {
    try {
      // A URL's password (refused when cluster.yaml is read, but the file may have changed since) never goes in.
      return [{ path: `project/${name}`, text: maskCredentials(readFileSync(join(inv.dir, name), 'utf8')) }];
    } catch {
      return [];
    }
  });
}

/** What the bundle holds, in its README. */
function readme(inv: Inventory, machines: readonly Machine[]): string {
  return [
    'hardway doctor --bundle: what to attach to a bug report.',
    '',
    'doctor.txt, doctor.json   doctor\'s report (findings, most likely cause first)',
    'cluster/                  kubectl get nodes / pods -A (-o wide) / the last events, from the jumpbox',
    'machines/HOST/            services.txt (state), journal.txt (last lines of each service), files.txt',
    '                          (every file hardway installs: SHA-256 here and the one hardway would install),',
    '                          routes.txt, etc-hosts, and on workers cni/ and kubelet-config.yaml',
    'project/                  machines.txt and cluster.yaml',
    '',
    'Left out: every file of pki/ (only checksums of the installed copies), kubeconfigs, keys, tokens and',
    'the encryption key; every text was also searched for pki/\'s secrets and any found replaced by [REDACTED].',
    `Machines: ${machines.map((m) => m.hostname).join(', ')} (of ${inv.machines.length}).`,
    '',
  ].join('\n');
}

/** Machines read at once for the bundle. */
const MACHINES_AT_ONCE = 16;

/** Gathers, redacts and writes the bundle (gzip'd tar, mode 0600); returns how many files it holds. */
export async function writeBundle(req: BundleRequest): Promise<number> {
  const gate = new Semaphore(MACHINES_AT_ONCE);
  const [cluster, ...machines] = await Promise.all([
    clusterBundle(req.inventory, req.env),
    ...req.machines.map((m) => gate.run(() => machineBundle(req.inventory, m, req.connect))),
  ]);
  const texts: BundleText[] = [
    { path: 'README.txt', text: readme(req.inventory, req.machines) },
    { path: 'doctor.txt', text: req.doctorText },
    { path: 'doctor.json', text: req.doctorJson },
    ...cluster!, ...machines.flat(), ...projectFiles(req.inventory),
  ];
  const redactor = await pkiRedactor(req.inventory.dir);
  // What is at FILE may have changed while the machines were asked.
  checkBundlePlace({ file: req.file, projectDir: req.inventory.dir, cwd: req.cwd ?? process.cwd(), force: req.force === true });
  writeAtomic(req.file, gzipSync(writeTar(bundleEntries(texts, redactor))), 0o600);
  return texts.length;
}

/** The tar entries of the texts under BUNDLE_ROOT, each redacted, with their directories first. */
export function bundleEntries(texts: readonly BundleText[], redactor: Redactor): TarEntry[] {
  const dirs = new Set<string>([BUNDLE_ROOT]);
  for (const t of texts) {
    const parts = `${BUNDLE_ROOT}/${t.path}`.split('/').slice(0, -1);
    for (let i = 1; i <= parts.length; i++) dirs.add(parts.slice(0, i).join('/'));
  }
  return [
    ...[...dirs].sort().map((path): TarEntry => ({ type: 'dir', path, mode: 0o755 })),
    ...texts.map((t): TarEntry => ({ type: 'file', path: `${BUNDLE_ROOT}/${t.path}`, mode: 0o644, data: Buffer.from(redactor.redact(t.text)) })),
  ];
}

/** Where the bundle goes and how it may be written: `cwd` is where paths are shown from; `force` replaces a file already there. */
export interface BundlePlace {
  file: string;
  projectDir: string;
  cwd: string;
  force: boolean;
}

/**
 * Refuses a bundle path hardway must not write: inside pki/ (the bundle is made to be shared, and
 * pki/ holds the cluster's keys), where something other than a file is, or over an existing file
 * without --force (an unrelated file of that name would be lost). Checked before any machine is
 * asked, and again just before the bundle is written.
 */
export function checkBundlePlace(place: BundlePlace): void {
  const { file, projectDir, cwd, force } = place;
  const shown = shownPath(file, cwd);
  const real = (p: string) => {
    try {
      return realpathSync(p);
    } catch {
      return resolve(p);
    }
  };
  const dir = real(dirname(file));
  const pki = real(join(projectDir, 'pki'));
  if (dir === pki || dir.startsWith(`${pki}${sep}`)) {
    throw new InputError(`--bundle ${quote(shown)} is inside pki/ (${shownPath(pki, cwd)}), which holds the cluster's keys; the bundle is made to be shared`,
      'write it outside pki/, e.g. --bundle doctor-bundle.tar.gz in the project directory');
  }
  const st = lstatOrNothing(file);
  if (st === undefined) return;
  if (!st.isFile()) {
    const what = st.isSymbolicLink() ? `a symbolic link (to ${readlinkSync(file)})` : kindOf(st);
    throw new InputError(`--bundle ${quote(shown)}: ${shown} is ${what}, not a file; nothing was written`, 'name another file, or move that one out of the way');
  }
  if (!force) {
    throw new InputError(`--bundle ${quote(shown)}: a file is already there; hardway does not replace it unless told to`,
      'pass --force to replace it, or name another file');
  }
}

/** The bundle's path as the user gave it, relative to where hardway runs when inside it. */
export function shownPath(file: string, cwd: string): string {
  const rel = relative(cwd, file);
  return rel && !rel.startsWith('..') ? rel : file;
}
