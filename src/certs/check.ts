// `hardway certs check` as a function: every expected certificate judged against the inventory,
// read-only. A problem is something `hardway certs` would fix; a warning is an approaching expiry.
import { X509Certificate } from 'node:crypto';
import { join } from 'node:path';
import type { Inventory } from '../inventory.ts';
import { caIdentities, identitiesFor, profileOf, type CaName } from './identities.ts';
import { inspect } from './inspect.ts';
import { checkPkiDir, octal, readOptional, SECRET_MODE, tooOpen } from './pki-files.ts';

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
    const problems = verdict.differences.map((d) => d.text);
    const open = readOptional(at(files.key)) === undefined ? undefined : tooOpen(at(files.key), SECRET_MODE);
    if (open !== undefined) problems.push(`key file ${files.key} is mode ${octal(open)}, must be ${octal(SECRET_MODE)}`);
    const warnings: string[] = [];
    const days = verdict.daysLeft;
    if (days !== undefined && days < 0) problems.push(`expired ${-days} days ago`);
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
      'hardway certs --renew-ca (a two-phase rotation, see its --help)');
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
  return { ok: certificates.every((c) => c.ok), certificates };
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
  lines.push('');
  lines.push(bad === 0
    ? `all ${report.certificates.length} certificates ok`
    : `${bad} of ${report.certificates.length} certificates have problems; run "hardway certs" to reissue what no longer matches`);
  return lines;
}
