// `hardway certs --renew-ca`: the cluster CA replaced without a moment in which a component meets a
// certificate it does not trust. Each run does one stage, and the state lives in pki/ alone:
//   start   a new CA (pki/ca-next.*) joins the trust bundle pki/ca.crt behind the old one, which
//           still signs; kubeconfigs embed the bundle. Then `distribute`: every machine trusts both.
//   switch  the new CA signs: pki/ca.key is its key, pki/ca.crt lists it first, the old one is kept
//           as pki/ca-previous.* (still trusted); every leaf of the cluster CA is reissued. Then
//           `distribute`.
//   finish  the old CA leaves the bundle (its files stay in pki/ca-previous.*). Then `distribute`.
// Stages run in this order; a stage resumes where a killed run stopped. The CA keys never leave
// pki/ except pki/ca.key, which distribute sends to control-plane machines as before.
import { X509Certificate } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Inventory } from '../inventory.ts';
import { FailureError } from '../errors.ts';
import { PKI } from '../layout.ts';
import { CA_ROTATION_STAGES } from './check.ts';
import { caIdentities, profileOf } from './identities.ts';
import { pemBlocks } from './pem.ts';
import { generateKey, keyFromPem } from './keys.ts';
import { readableCertificate } from './inspect.ts';
import { doneLine, type PkiReport } from './pki-report.ts';
import { readOptional, writePkiFiles, PUBLIC_MODE, SECRET_MODE, type PkiWrite } from './pki-files.ts';

/** The stage a `--renew-ca` run does next. */
export type RotationStage = (typeof CA_ROTATION_STAGES)[number];

/** "2/3": where a stage is in the rotation. */
function stageNumber(stage: RotationStage): string {
  return `${CA_ROTATION_STAGES.indexOf(stage) + 1}/${CA_ROTATION_STAGES.length}`;
}

/** What the CA files of pki/ hold, read once. */
interface CaFiles {
  bundle: string[];
  key?: string;
  next?: { crt?: string; key?: string };
  previous?: { crt?: string; key?: string };
}

const same = (a: string | undefined, b: string | undefined) => a !== undefined && b !== undefined && a.trim() === b.trim();

function readCaFiles(dir: string): CaFiles {
  const at = (p: string) => readOptional(join(dir, p));
  const crt = at(PKI.ca.crt);
  if (crt === undefined) throw new FailureError(`${PKI.ca.crt} is missing: there is no CA to rotate`, 'run hardway certs first');
  const pair = (files: { crt: string; key: string }) => {
    const c = at(files.crt);
    const k = at(files.key);
    return c === undefined && k === undefined ? undefined : { ...(c !== undefined ? { crt: c } : {}), ...(k !== undefined ? { key: k } : {}) };
  };
  const key = at(PKI.ca.key);
  const next = pair(PKI.caNext);
  const previous = pair(PKI.caPrevious);
  const files: CaFiles = { bundle: pemBlocks(crt), ...(key !== undefined ? { key } : {}), ...(next ? { next } : {}), ...(previous ? { previous } : {}) };
  assertReadable(files);
  return files;
}

/** What to do about a CA file of pki/ that cannot be read: hardway never makes a CA in its place. */
const UNREADABLE_HINT = 'restore it from your backup of pki/ (hardway never replaces a CA: every certificate, kubeconfig and running component trusts it); then run hardway certs --renew-ca --yes again';

/**
 * Every CA file of pki/ must parse before a stage decides anything or writes a file: a bundle with
 * a certificate node cannot read would otherwise be copied into the new bundle, and an unreadable
 * key would become pki/ca-previous.key. Refuses (exit 1) naming the file; nothing is written.
 */
function assertReadable(f: CaFiles): void {
  const badCrt = (file: string, pem: string | undefined) => {
    if (pem === undefined) return;
    const blocks = pemBlocks(pem);
    const bad = blocks.findIndex((b) => readableCertificate(b) === undefined);
    if (bad < 0) return;
    const which = blocks.length > 1 ? `certificate ${bad + 1} of ${blocks.length} in ${file}` : file;
    throw new FailureError(`${which} is unreadable: it does not parse as an X.509 certificate with a public key hardway can read; nothing was changed`, UNREADABLE_HINT);
  };
  const badKey = (file: string, pem: string | undefined) => {
    if (pem === undefined) return;
    try {
      keyFromPem(pem);
    } catch {
      throw new FailureError(`${file} is unreadable: it does not parse as a private key; nothing was changed`, UNREADABLE_HINT);
    }
  };
  badCrt(PKI.ca.crt, f.bundle.join(''));
  badKey(PKI.ca.key, f.key);
  badCrt(PKI.caNext.crt, f.next?.crt);
  badKey(PKI.caNext.key, f.next?.key);
  badCrt(PKI.caPrevious.crt, f.previous?.crt);
  badKey(PKI.caPrevious.key, f.previous?.key);
}

/** Which stage the CA files of pki/ call for; anything else is a failure that names what it found. */
export function rotationStage(dir: string): RotationStage {
  const f = readCaFiles(dir);
  const prevInBundle = f.bundle.some((b) => same(b, f.previous?.crt));
  if (f.bundle.length === 1) return 'start';
  if (f.bundle.length === 2 && f.next?.crt !== undefined && f.next.key !== undefined && (same(f.bundle[1], f.next.crt) || prevInBundle)) return 'switch';
  if (f.bundle.length === 2 && f.next === undefined && same(f.bundle[1], f.previous?.crt)) return 'finish';
  throw new FailureError(
    `${PKI.ca.crt} holds ${f.bundle.length} certificates, but ${PKI.caNext.crt} and ${PKI.caPrevious.crt} say no stage of a CA rotation; nothing was changed`,
    `restore pki/ from your backup, or put back the files of the stage you were at (see hardway certs --help)`,
  );
}

/** The lines a stage adds for the user: what to run next. */
export const NEXT_STEP: Record<RotationStage, string> = {
  start: `CA rotation ${stageNumber('start')} (start): pki/ca.crt trusts the old and the new CA, the old one still signs. Next: hardway distribute (every component restarts trusting both), then hardway certs --renew-ca --yes again`,
  switch: `CA rotation ${stageNumber('switch')} (switch): the new CA signs, every certificate of the cluster CA was reissued, the old CA is still trusted. Next: hardway distribute, then hardway certs --renew-ca --yes again`,
  finish: `CA rotation ${stageNumber('finish')} (finish): pki/ca.crt holds the new CA only; the old one is kept in ${PKI.caPrevious.crt} and ${PKI.caPrevious.key} (move them away before another rotation). Next: hardway distribute`,
};

/**
 * Does one stage's work on pki/'s CA files (the caller holds the project's lock, reissues the
 * leaves after `switch` and rewrites the kubeconfigs after every stage). Every write is atomic, and
 * a rerun after a kill finds the stage half done and completes it.
 */
export async function rotateCa(inv: Inventory, now: Date, stage: RotationStage): Promise<PkiReport> {
  const f = readCaFiles(inv.dir);
  const lines = [];
  const ca = caIdentities().find((c) => c.name === 'ca')!;
  if (stage === 'start') {
    if (f.previous !== undefined) {
      throw new FailureError(`${PKI.caPrevious.crt} or ${PKI.caPrevious.key} exists: the CA an earlier rotation retired; nothing was changed`,
        'move both files out of pki/ (keep them if anything still needs that CA), then run hardway certs --renew-ca --yes again');
    }
    let next = f.next?.crt !== undefined && f.next.key !== undefined ? f.next : undefined;
    const writes: PkiWrite[] = [];
    if (!next) {
      const key = await generateKey(inv.settings.keyAlgorithm);
      // node-forge is loaded only when a certificate is issued (a no-op run never needs it).
      const { issueCertificate } = await import('./issue.ts');
      const crt = issueCertificate(profileOf(ca), key.publicKey, { selfKey: key.privateKey }, { now, validityDays: inv.settings.certValidityDays });
      // Key first: a certificate without its key is never left behind.
      writes.push({ pkiPath: PKI.caNext.key, content: key.pem, mode: SECRET_MODE }, { pkiPath: PKI.caNext.crt, content: crt, mode: PUBLIC_MODE });
      next = { crt, key: key.pem };
      lines.push(doneLine(`issued the new CA ${PKI.caNext.crt} (serial ${serialOf(crt)})`));
    }
    writes.push({ pkiPath: PKI.ca.crt, content: f.bundle[0]! + pemBlocks(next.crt!)[0]!, mode: PUBLIC_MODE });
    writePkiFiles(inv.dir, writes);
    lines.push(doneLine(`${PKI.ca.crt} now trusts both CAs (the old one, serial ${serialOf(f.bundle[0]!)}, still signs)`));
    return { lines, warnings: [] };
  }
  if (stage === 'switch') {
    const [first, second] = f.bundle as [string, string];
    const nextCrt = f.next!.crt!;
    const nextKey = f.next!.key!;
    const prevInBundle = same(first, f.previous?.crt) || same(second, f.previous?.crt);
    const writes: PkiWrite[] = [];
    if (!prevInBundle) {
      if (f.previous !== undefined) {
        throw new FailureError(`${PKI.caPrevious.crt} or ${PKI.caPrevious.key} exists: the CA an earlier rotation retired; nothing was changed`,
          'move both files out of pki/ (keep them if anything still needs that CA), then run hardway certs --renew-ca --yes again');
      }
      if (f.key === undefined) {
        throw new FailureError(`${PKI.ca.key} is not in pki/ (kept offline?): the switch keeps it as ${PKI.caPrevious.key}; nothing was changed`, 'put it back in pki/, then run hardway certs --renew-ca --yes again');
      }
      if (!keyMatches(first, f.key)) {
        throw new FailureError(`${PKI.ca.key} does not match the first certificate of ${PKI.ca.crt}; nothing was changed`, 'restore pki/ from your backup');
      }
      writes.push({ pkiPath: PKI.caPrevious.key, content: f.key, mode: SECRET_MODE }, { pkiPath: PKI.caPrevious.crt, content: first, mode: PUBLIC_MODE });
    }
    const previous = prevInBundle ? (same(first, f.previous?.crt) ? first : second) : first;
    // Key, then bundle: between the two a rerun resumes here (ca-next.* and ca-previous.* both exist).
    writes.push({ pkiPath: PKI.ca.key, content: nextKey, mode: SECRET_MODE }, { pkiPath: PKI.ca.crt, content: pemBlocks(nextCrt)[0]! + previous, mode: PUBLIC_MODE });
    writePkiFiles(inv.dir, writes);
    for (const p of [PKI.caNext.crt, PKI.caNext.key]) rmSync(join(inv.dir, p), { force: true });
    lines.push(doneLine(`the new CA (serial ${serialOf(nextCrt)}) signs now; the old one (serial ${serialOf(previous)}) is kept as ${PKI.caPrevious.crt} and still trusted`));
    return { lines, warnings: [] };
  }
  writePkiFiles(inv.dir, [{ pkiPath: PKI.ca.crt, content: f.bundle[0]!, mode: PUBLIC_MODE }]);
  lines.push(doneLine(`${PKI.ca.crt} trusts the new CA only (serial ${serialOf(f.bundle[0]!)})`));
  return { lines, warnings: [] };
}

/** True when `keyPem` is the key of the certificate `crtPem` (false when either does not parse). */
function keyMatches(crtPem: string, keyPem: string): boolean {
  try {
    return readableCertificate(crtPem)?.checkPrivateKey(keyFromPem(keyPem).privateKey) === true;
  } catch {
    return false;
  }
}

function serialOf(pem: string): string {
  return new X509Certificate(pem).serialNumber;
}
