// `hardway certs check` as a function: every expected certificate judged against the inventory,
// read-only. A problem is something `hardway certs` would fix; a warning is an approaching expiry.
import { X509Certificate } from 'node:crypto';
import { existsSync, lstatSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Inventory } from '../inventory.ts';
import { caIdentities, identitiesFor, profileOf, type CaName } from './identities.ts';
import { expiredText, inspect } from './inspect.ts';
import { checkPkiDir, DIR_MODE, octal, readOptional, SECRET_MODE, tooOpen } from './pki-files.ts';
import { PKI } from '../layout.ts';

/** The verdict on one certificate, as `certs check --json` prints it. */
export interface CertificateStatus {
  name: string;
  ok: boolean;
  problems: string[];
  warnings: string[];
  notAfter: string | null;
  daysLeft: number | null;
}

/** The verdict on the whole pki/. */
export interface CheckReport {
  ok: boolean;
  /** Problems of pki/ itself rather than of one certificate (a directory readable by others). */
  problems: string[];
  certificates: CertificateStatus[];
}

/** Checks both CAs and every leaf of the inventory; reads files only. */
export function checkCertificates(inv: Inventory, now: Date): CheckReport {
  checkPkiDir(inv.dir);
  const at = (p: string) => join(inv.dir, p);
  const cas = new Map<CaName, X509Certificate>();
  const certificates: CertificateStatus[] = [];
  const warnDays = inv.settings.renewBeforeDays;
  const judge = (name: string, files: { crt: string; key: string }, run: () => ReturnType<typeof inspect>, renewWith: string) => {
    const verdict = run();
    // A CA whose certificate is here but whose key is not has its key kept offline on purpose
    // (kubeconfigs and every check need the certificate only): a warning, not a problem.
    const offline = isCa(name) && verdict.certificate !== undefined && verdict.differences.some((d) => d.kind === 'key-missing');
    const problems = verdict.differences.filter((d) => !(offline && d.kind === 'key-missing')).map((d) => d.text);
    const open = readOptional(at(files.key)) === undefined ? undefined : tooOpen(at(files.key), SECRET_MODE);
    if (open !== undefined) problems.push(`key file ${files.key} is mode ${octal(open)}, must be ${octal(SECRET_MODE)}`);
    const warnings: string[] = offline ? [caKeyOffline(files.key)] : [];
    const days = verdict.daysLeft;
    if (verdict.expired) problems.push(`${expiredText(verdict.notAfter!, now)}; renew it: ${renewWith}`);
    else if (days !== undefined && days < warnDays) warnings.push(`expires in ${days} days (renewBeforeDays: ${warnDays}); renew it: ${renewWith}`);
    certificates.push({
      name, ok: problems.length === 0, problems, warnings,
      notAfter: verdict.notAfter?.toISOString() ?? null, daysLeft: days ?? null,
    });
    return verdict;
  };

  for (const ca of caIdentities()) {
    const verdict = judge(ca.name, ca.files, () =>
      inspect({ profile: profileOf(ca), crtPem: readOptional(at(ca.files.crt)), keyPem: readOptional(at(ca.files.key)), issuer: 'self', now }),
      caRotationCommand('', ca.name));
    if (verdict.certificate) cas.set(ca.name, verdict.certificate);
  }
  for (const id of identitiesFor(inv)) {
    const issuer = cas.get(id.issuer);
    const verdict = judge(id.name, id.files, () =>
      inspect({
        profile: profileOf(id), crtPem: readOptional(at(id.files.crt)), keyPem: readOptional(at(id.files.key)),
        issuer, keyAlgorithm: inv.settings.keyAlgorithm, now,
      }), renewCommand(id.name));
    if (!issuer && verdict.certificate) {
      const last = certificates[certificates.length - 1]!;
      last.problems = last.problems.map((p) => (p === 'signed by a different CA' ? `cannot verify the chain: ${id.issuer} is missing or unreadable` : p));
    }
  }
  const problems = pkiDirProblems(inv.dir);
  return { ok: problems.length === 0 && certificates.every((c) => c.ok), problems, certificates };
}

/** pki/ and the directories in it (never entered through a link) must grant nothing to others: 0700. */
function pkiDirProblems(projectDir: string): string[] {
  const root = join(projectDir, PKI.dir);
  if (!existsSync(root)) return [];
  const machines = join(projectDir, PKI.machinesDir);
  const dirs = [root, ...(lstatSync(machines, { throwIfNoEntry: false })?.isDirectory() ? [machines, ...readdirSync(machines, { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => join(machines, d.name))] : [])];
  return dirs.flatMap((dir) => {
    const open = tooOpen(dir, DIR_MODE);
    const shown = `${PKI.dir}${dir.slice(root.length)}/`;
    return open === undefined ? [] : [`${shown} is mode ${octal(open)}, must be ${octal(DIR_MODE)}: others can list the keys' names (hardway certs narrows it)`];
  });
}

/** The stages of a rotation of the cluster CA, in order: each one a run of `hardway certs --renew-ca`. */
export const CA_ROTATION_STAGES = ['start', 'switch', 'finish'] as const;

/**
 * How to rotate the cluster CA, as every message and doc says it (certs, certs check, doctor, the
 * docs): the command as typed (it needs no --yes: each stage is a run of its own, and switch and
 * finish refuse while a machine is behind), with `projectArgs` (e.g. " --dir DIR") after each command.
 */
export function caRotationCommand(projectArgs = '', name: CaName = 'ca'): string {
  const n = CA_ROTATION_STAGES.length;
  return `hardway certs --renew-ca${name === 'ca' ? '' : ` ${name}`} --yes${projectArgs}, ${n} times (${CA_ROTATION_STAGES.join(', ')}), each followed by hardway distribute${projectArgs}; see hardway certs --help`;
}

/** The warning for a CA whose key is not in pki/ (kept offline): what works without it and what does not. */
export function caKeyOffline(keyFile: string): string {
  return `the CA key is offline (${keyFile} is not in pki/): kubeconfigs and checks need only the certificate, but hardway certs cannot issue or renew a certificate it signs, and hardway distribute installs it on the control plane: put it back before either`;
}

const isCa = (name: string) => caIdentities().some((c) => c.name === name);

/** How to replace a CA whose end is near or past: hardway never does it by itself (every component trusts it). */
export function caRenewal(name: CaName): string {
  return `hardway never replaces a CA by itself (every component trusts it): rotate it with ${caRotationCommand('', name)}`;
}

/** The commands that renew one leaf and install it: what a warning, doctor and the README say. */
export function renewCommand(name: string): string {
  return `hardway certs --renew ${name} && hardway distribute`;
}

/** The human table: name, status, expiry, then problems and warnings. */
export function formatCheck(report: CheckReport): string[] {
  const width = Math.max(11, ...report.certificates.map((c) => c.name.length));
  const lines = [`${'CERTIFICATE'.padEnd(width)}  STATUS  EXPIRES`];
  for (const c of report.certificates) {
    const expires = c.notAfter ? `${c.notAfter.slice(0, 10)} (${c.daysLeft} days)` : '-';
    const status = !c.ok ? 'FAIL' : c.warnings.length > 0 ? 'warn' : 'ok';
    lines.push(`${c.name.padEnd(width)}  ${status.padEnd(6)}  ${expires}`);
    for (const p of c.problems) lines.push(`${' '.repeat(width)}  - ${p}`);
    for (const w of c.warnings) lines.push(`${' '.repeat(width)}  ! ${w}`);
  }
  const bad = report.certificates.filter((c) => !c.ok).length;
  for (const p of report.problems) lines.push(`FAIL: ${p}`);
  lines.push('');
  lines.push(bad === 0
    ? `all ${report.certificates.length} certificates ok${report.problems.length > 0 ? `, but ${PKI.dir}/ is not private: run "hardway certs"` : ''}`
    : `${bad} of ${report.certificates.length} certificates have problems; run "hardway certs" to reissue what no longer matches`);
  return lines;
}
