// Shared by the certs, kubeconfig and encryption-config tests: a temporary project directory, the
// real openssl CLI as an independent judge, and a snapshot of pki/ to prove what changed.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { caIdentities, identitiesFor, profileOf, type CaName } from '../../src/certs/identities.ts';
import { issueCertificate } from '../../src/certs/issue.ts';
import { keyFromPem } from '../../src/certs/keys.ts';
import { loadInventory } from '../../src/inventory.ts';
import { PassThrough } from 'node:stream';
import { expect } from 'vitest';
import type { CliContext } from '../../src/cli/command.ts';
import { renewCa } from '../../src/commands/certs-ca.ts';
import { formatError, isExpectedError } from '../../src/errors.ts';
import { runCli, type CliRun } from '../helpers/cli.ts';

/** The example cluster of the tutorial: one server, two workers. */
export const EXAMPLE_MACHINES = [
  '10.240.0.10 server.kubernetes.local server',
  '10.240.0.20 node-0.kubernetes.local node-0 10.200.0.0/24',
  '10.240.0.21 node-1.kubernetes.local node-1 10.200.1.0/24',
  '',
].join('\n');

/** A temporary project: machines.txt (and cluster.yaml if given) in a fresh directory. */
export function makeProject(opts: { machines?: string; cluster?: string } = {}): { dir: string; machines: string } {
  const dir = mkdtempSync(join(tmpdir(), 'hardway-certs-'));
  const machines = join(dir, 'machines.txt');
  writeFileSync(machines, opts.machines ?? EXAMPLE_MACHINES);
  if (opts.cluster !== undefined) writeFileSync(join(dir, 'cluster.yaml'), opts.cluster);
  return { dir, machines };
}

/** A temporary project (ECDSA keys unless `cluster` says otherwise) after `hardway certs`, and `kubeconfigs` if asked; each run must succeed. */
export async function certifiedProject(opts: { cluster?: string; machines?: string; kubeconfigs?: boolean } = {}): Promise<{ dir: string; machines: string }> {
  const project = makeProject({ cluster: opts.cluster ?? 'keyAlgorithm: ecdsa-p256\n', ...(opts.machines ? { machines: opts.machines } : {}) });
  for (const cmd of opts.kubeconfigs ? ['certs', 'kubeconfigs'] : ['certs']) {
    const run = await hardway(project, cmd);
    expect(run.code, run.stderr).toBe(0);
  }
  return project;
}

/** Runs `hardway <args> --machines <project>/machines.txt` in-process. */
export function hardway(project: { dir: string; machines: string }, ...args: string[]): Promise<CliRun> {
  return runCli([...args, '--machines', project.machines], project.dir);
}

/** Runs the openssl CLI; returns stdout, or throws with its stderr. */
export function openssl(...args: string[]): string {
  return execFileSync('openssl', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/** `openssl verify` of a certificate against a CA file: true when openssl says OK. */
export function opensslVerifies(caFile: string, crtFile: string): boolean {
  try {
    return openssl('verify', '-x509_strict', '-CAfile', caFile, crtFile).trim() === `${crtFile}: OK`;
  } catch {
    return false;
  }
}

/** `openssl x509 -noout -text` of a certificate. */
export function opensslText(crtFile: string): string {
  return openssl('x509', '-noout', '-text', '-in', crtFile);
}

/** True when openssl derives the same public key from the certificate and from the private key. */
export function opensslKeyMatches(crtFile: string, keyFile: string): boolean {
  return openssl('x509', '-noout', '-pubkey', '-in', crtFile) === openssl('pkey', '-pubout', '-in', keyFile);
}

/** Every file in pki/ and its subdirectories with its SHA-256 and mode, to compare before and after a run. */
export function snapshot(dir: string): Record<string, { sha: string; mode: string }> {
  const pki = join(dir, 'pki');
  const out: Record<string, { sha: string; mode: string }> = {};
  for (const f of (readdirSync(pki, { recursive: true }) as string[]).sort()) {
    const st = statSync(join(pki, f));
    out[f] = {
      sha: st.isDirectory() ? 'directory' : createHash('sha256').update(readFileSync(join(pki, f))).digest('hex'),
      mode: (st.mode & 0o777).toString(8),
    };
  }
  return out;
}

/**
 * The pki/ path (without extension) of a certificate named as hardway prints it: `admin` is
 * pki/admin, a machine's own `node-0/kubelet` is pki/machines/node-0/kubelet.
 */
export function pkiName(name: string): string {
  return name.includes('/') ? `machines/${name}` : name;
}

/** The names in a run's output lines with the given verb (kept, issued, reissued, written). */
export function named(run: CliRun, verb: string): string[] {
  return run.stdout.split('\n').filter((l) => l.startsWith(`${verb} `)).map((l) => l.split(' ')[1]!);
}

/**
 * Rewrites one certificate of a project as if issued at `at` (e.g. in the future): a leaf is signed
 * by the project's own CA with its existing key; a CA (`ca`, `etcd-ca`) gets a new self-signed
 * certificate for its existing key.
 */
export function issuedAt(dir: string, name: string, at: Date): void {
  const read = (p: string) => readFileSync(join(dir, p), 'utf8');
  const ca = caIdentities().find((c) => c.name === name);
  const ctx = { now: at, validityDays: 365 };
  if (ca) {
    const key = keyFromPem(read(ca.files.key));
    writeFileSync(join(dir, ca.files.crt), issueCertificate(profileOf(ca), key.publicKey, { selfKey: key.privateKey }, ctx));
    return;
  }
  const id = identitiesFor(loadInventory(join(dir, 'machines.txt'))).find((i) => i.name === name)!;
  const issuer = caIdentities().find((c) => c.name === id.issuer)!;
  const signer = { certificatePem: read(issuer.files.crt), privateKey: keyFromPem(read(issuer.files.key)).privateKey };
  writeFileSync(join(dir, id.files.crt), issueCertificate(profileOf(id), keyFromPem(read(id.files.key)).publicKey, signer, ctx));
}

/** One `certs --renew-ca [CA]` stage with the machines' answer given (`behind`): exit code and output as the CLI prints them. */
export async function renewCaStage(p: { dir: string; machines: string }, behind: string[] = [], force = false, ca?: CaName): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = new PassThrough();
  const err = new PassThrough();
  let stdout = '';
  let stderr = '';
  out.on('data', (c) => (stdout += c));
  err.on('data', (c) => (stderr += c));
  const ctx: CliContext = { values: {}, positionals: [], stdout: out, stderr: err, cwd: p.dir, env: {} };
  let code: number;
  try {
    code = await renewCa(loadInventory(p.machines), ctx, force, async () => behind, ...(ca ? [ca] : []));
  } catch (e) {
    if (!isExpectedError(e)) throw e;
    stderr += formatError(e);
    code = e.exitCode;
  }
  return { code, stdout, stderr };
}
