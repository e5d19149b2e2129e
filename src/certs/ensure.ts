// `hardway certs` as a function: keep every CA, keep every leaf that still says what the inventory
// needs, (re)issue the rest. Decides everything before writing anything.
import { X509Certificate } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { FailureError } from '../errors.ts';
import type { Inventory } from '../inventory.ts';
import { PKI } from '../layout.ts';
import { assertDistinctFiles, caIdentities, identitiesFor, profileOf, type CaIdentity, type CaName, type Identity } from './identities.ts';
import { daysUntil, expiredText, inspect, readableCertificate, untilText } from './inspect.ts';
import { RENEW_REASON } from './renew.ts';
import { caRenewal } from './check.ts';
import { algorithmOf, generateKey, keyFromPem, type KeyPair } from './keys.ts';
import { kubeconfigsFor } from './kubeconfig.ts';
import { migrateLegacyLayout } from './migrate.ts';
import { doneLine, keptLine, type PkiLine, type PkiReport } from './pki-report.ts';
import { checkPkiDir, checkPkiWrites, ensurePkiDir, narrowMode, readOptional, writePkiFiles, PUBLIC_MODE, SECRET_MODE, type PkiWrite } from './pki-files.ts';

/** What `hardway certs` did, one entry per certificate, plus notes (mode fixes) and warnings. */
export type CertsReport = PkiReport;

/** A CA that exists and is usable: its certificate and key. */
export interface ExistingCa {
  pem: string;
  cert: X509Certificate;
  key: KeyPair;
}

/** What `hardway certs` is asked for beyond bringing pki/ in line: leaves to reissue anyway (`--renew`). */
export interface EnsureOptions {
  /** Names of leaves (see renewSelection) reissued even when they still match the inventory. */
  renew?: ReadonlySet<string>;
}

/** Brings pki/ in line with the inventory. `now` is the clock; the CA is never replaced. */
export async function ensureCertificates(inv: Inventory, now: Date, opts: EnsureOptions = {}): Promise<CertsReport> {
  const { settings } = inv;
  const at = (p: string) => join(inv.dir, p);
  const cas = caIdentities();
  checkPkiDir(inv.dir);
  // Read and judge both CAs before touching anything: a broken CA is an error that changes nothing.
  const existing = new Map<CaName, ExistingCa>(cas.flatMap((ca) => {
    const found = existingCa(ca, readOptional(at(ca.files.crt)), readOptional(at(ca.files.key)), now);
    return found ? [[ca.name, found] as const] : [];
  }));
  const ids = identitiesFor(inv);
  assertDistinctFiles(ids, kubeconfigsFor(inv));

  const lines: PkiLine[] = [];
  const warnings: string[] = [];
  const note = (n: string | undefined) => n && lines.push(doneLine(n));
  note(ensurePkiDir(inv.dir));
  lines.push(...migrateLegacyLayout(inv, new Map([...existing].map(([n, ca]) => [n, ca.cert])), now).map(doneLine));

  const leaves = judgeLeaves(inv, ids, existing, now, opts);

  // Every key that is needed, generated at once: node:crypto runs them on the libuv pool in parallel.
  const newCas = cas.filter((ca) => !existing.has(ca.name));
  const toIssue = leaves.filter((l) => l.reasons.length > 0);
  // A link in the way of any file to write is refused before a key is made or a file written.
  checkPkiWrites(inv.dir, [...newCas.flatMap((ca) => [ca.files.key, ca.files.crt]), ...toIssue.flatMap((l) => [l.id.files.key, l.id.files.crt])]);
  const keys = await Promise.all([...newCas, ...toIssue].map((x) => ('kept' in x && x.kept ? x.kept : generateKey(settings.keyAlgorithm))));
  const ctx = { now, validityDays: settings.certValidityDays };
  // node-forge is loaded only when something is issued: a run with a complete pki/ never loads it.
  const issuer = newCas.length + toIssue.length > 0 ? await import('./issue.ts') : undefined;

  // Everything is written at once (writePkiFiles): a failed write (no space, a read-only disk)
  // leaves pki/ as it was, so no key is ever left without its certificate.
  const writes: PkiWrite[] = [];
  for (const [i, ca] of newCas.entries()) {
    const key = keys[i]!;
    const pem = issuer!.issueCertificate(profileOf(ca), key.publicKey, { selfKey: key.privateKey }, ctx);
    writes.push({ pkiPath: ca.files.key, content: key.pem, mode: SECRET_MODE }, { pkiPath: ca.files.crt, content: pem, mode: PUBLIC_MODE });
    existing.set(ca.name, { pem, cert: new X509Certificate(pem), key });
  }
  for (const [i, leaf] of toIssue.entries()) {
    const key = keys[newCas.length + i]!;
    const ca = existing.get(leaf.id.issuer)!;
    const pem = issuer!.issueCertificate(profileOf(leaf.id), key.publicKey, { certificatePem: ca.pem, privateKey: ca.key.privateKey }, ctx);
    // Key first, then certificate: if we stop in between, the next run sees a mismatch and reissues.
    if (!leaf.kept) writes.push({ pkiPath: leaf.id.files.key, content: key.pem, mode: SECRET_MODE });
    writes.push({ pkiPath: leaf.id.files.crt, content: pem, mode: PUBLIC_MODE });
  }
  writePkiFiles(inv.dir, writes);
  for (const ca of cas) {
    const found = existing.get(ca.name)!;
    lines.push(newCas.includes(ca) ? doneLine(`issued ${ca.name} (new)`) : keptLine(`kept ${ca.name}`));
    note(narrowMode(at(ca.files.key), SECRET_MODE, ca.files.key));
    const daysLeft = daysUntil(new Date(found.cert.validTo), now);
    if (daysLeft < settings.renewBeforeDays) warnings.push(`${ca.name} expires in ${daysLeft} days; ${caRenewal(ca.name)}`);
  }

  for (const leaf of leaves) {
    if (leaf.reasons.length === 0) lines.push(keptLine(`kept ${leaf.id.name}`));
    else lines.push(doneLine(leaf.fresh ? `issued ${leaf.id.name} (new)` : `reissued ${leaf.id.name} (${leaf.reasons.join('; ')})${leaf.kept ? ', same key (it signs every service-account token)' : ''}`));
    note(narrowMode(at(leaf.id.files.key), SECRET_MODE, leaf.id.files.key));
  }
  for (const name of unusedCertificates(inv, leaves.map((l) => l.id))) {
    lines.push(doneLine(`unused ${name} (not in the inventory any more; left in ${PKI.dir}/)`));
  }
  return { lines, warnings };
}

/** One leaf as `hardway certs` judges it: why it must be (re)issued (none: kept), whether it is new, the key it keeps. */
export interface LeafVerdict {
  id: Identity;
  reasons: string[];
  fresh: boolean;
  kept: KeyPair | undefined;
}

/** Judges every leaf against the inventory and the CAs as they are (a CA not there yet signs none of them). Reads only. */
export function judgeLeaves(inv: Inventory, ids: Identity[], cas: ReadonlyMap<CaName, ExistingCa>, now: Date, opts: EnsureOptions = {}): LeafVerdict[] {
  const { settings } = inv;
  const at = (p: string) => join(inv.dir, p);
  return ids.map((id) => {
    const ca = cas.get(id.issuer);
    const verdict = inspect({
      profile: profileOf(id), crtPem: readOptional(at(id.files.crt)), keyPem: readOptional(at(id.files.key)),
      issuer: ca?.cert, keyAlgorithm: settings.keyAlgorithm, now,
    });
    const reasons = verdict.differences.map((d) => d.text);
    if (verdict.expired) reasons.push(expiredText(verdict.notAfter!, now));
    else if (verdict.daysLeft !== undefined && verdict.daysLeft < settings.renewBeforeDays) reasons.push(`expires in ${verdict.daysLeft} days`);
    if (reasons.length === 0 && opts.renew?.has(id.name)) reasons.push(RENEW_REASON);
    const fresh = verdict.differences.some((d) => d.kind === 'missing') && verdict.differences.some((d) => d.kind === 'key-missing');
    // The service-accounts key signs every service-account token: a new one would void them all.
    const keyPem = id.keepKey && verdict.key && algorithmOf(verdict.key) === settings.keyAlgorithm ? readOptional(at(id.files.key)) : undefined;
    return { id, reasons, fresh, kept: keyPem === undefined ? undefined : keyFromPem(keyPem) };
  });
}

/** A CA found in pki/, or undefined if neither file exists; a half or mismatched CA is an error. */
export function existingCa(ca: CaIdentity, crtPem: string | undefined, keyPem: string | undefined, now: Date): ExistingCa | undefined {
  if (crtPem === undefined && keyPem === undefined) return undefined;
  const restore = `restore it from your backup; hardway never replaces a CA because every certificate, kubeconfig and running component trusts it (to start over on purpose, move ${ca.files.crt} and ${ca.files.key} away)`;
  // A key kept offline on purpose (kubeconfigs and checks need only the certificate) must come back to sign.
  if (keyPem === undefined) throw new FailureError(`${ca.files.crt} exists but ${ca.files.key} is missing; nothing was changed`, `${restore}; if you keep it offline, put it back in ${PKI.dir}/ for this run`);
  if (crtPem === undefined) throw new FailureError(`${ca.files.key} exists but ${ca.files.crt} is missing; nothing was changed`, restore);
  const cert = readableCertificate(crtPem);
  if (cert === undefined) throw new FailureError(`${ca.files.crt} is not a readable certificate (it does not parse as X.509, or its public key does not); nothing was changed`, restore);
  let key: KeyPair;
  try {
    key = keyFromPem(keyPem);
  } catch {
    throw new FailureError(`${ca.files.key} is not a readable private key; nothing was changed`, restore);
  }
  if (!cert.checkPrivateKey(key.privateKey)) {
    throw new FailureError(`${ca.files.key} does not match ${ca.files.crt}; nothing was changed`, restore);
  }
  // A leaf in the CA's place (as a machine named "ca" made of it before pki/machines/) must not sign anything.
  if (!cert.ca) {
    throw new FailureError(`${ca.files.crt} is not a CA certificate (it says ${cert.subject.split('\n').join(', ')}, CA:FALSE); nothing was changed`, restore);
  }
  // Signing with it would make certificates no TLS peer accepts yet; replacing it would break trust.
  const validFrom = new Date(cert.validFrom);
  if (validFrom.getTime() > now.getTime()) {
    throw new FailureError(
      `${ca.files.crt} is not valid yet: valid from ${validFrom.toISOString()} (${untilText(validFrom, now)}); nothing was changed`,
      `check this machine's clock (it says ${now.toISOString()}); hardway never replaces a CA, since every certificate, kubeconfig and running component trusts it: once the clock is right, run it again`,
    );
  }
  // Certificates it signs would be rejected at once, and those it signed are already: keeping them
  // all and saying nothing (exit 0) would leave a cluster that cannot talk to itself.
  const validTo = new Date(cert.validTo);
  if (validTo.getTime() <= now.getTime()) {
    throw new FailureError(
      `${ca.files.crt} ${expiredText(validTo, now)} (notAfter ${validTo.toISOString()}): no TLS peer accepts a certificate it signed any more; nothing was changed`,
      caRenewal(ca.name),
    );
  }
  return { pem: crtPem, cert, key };
}

/** Leaf certificates in pki/ and pki/machines/<hostname>/ that the inventory no longer names (e.g. a removed worker). */
function unusedCertificates(inv: Inventory, ids: Identity[]): string[] {
  const known = new Set([...ids.map((i) => i.files.crt), ...caIdentities().map((c) => c.files.crt),
    PKI.caNext.crt, PKI.caPrevious.crt, PKI.etcdCaNext.crt, PKI.etcdCaPrevious.crt]);
  const crts = (rel: string) => readdirSync(join(inv.dir, rel), { withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.crt')).map((e) => `${rel}/${e.name}`);
  const machinesDir = join(inv.dir, PKI.machinesDir);
  const perMachine = existsSync(machinesDir)
    ? readdirSync(machinesDir, { withFileTypes: true }).filter((e) => e.isDirectory()).flatMap((e) => crts(`${PKI.machinesDir}/${e.name}`))
    : [];
  return [...crts(PKI.dir), ...perMachine]
    .filter((f) => !known.has(f))
    .map((f) => f.slice(0, -'.crt'.length).replace(`${PKI.machinesDir}/`, '').replace(`${PKI.dir}/`, ''))
    .sort();
}
