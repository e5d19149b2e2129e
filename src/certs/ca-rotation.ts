// `hardway certs --renew-ca [etcd-ca]`: the cluster CA (or the etcd CA) replaced without a moment in
// which a component meets a certificate it does not trust. Each run does one stage, and the state
// lives in pki/ alone (the files below are the cluster CA's; the etcd CA's are pki/etcd-ca.*,
// pki/etcd-ca-next.* and pki/etcd-ca-previous.*):
//   start   a new CA (pki/ca-next.*) joins the trust bundle pki/ca.crt behind the old one, which
//           still signs; kubeconfigs embed the bundle. Then `distribute`: every machine trusts both.
//   switch  the new CA signs: pki/ca.key is its key, pki/ca.crt lists it first, the old one is kept
//           as pki/ca-previous.* (still trusted); every leaf of the cluster CA is reissued. Then
//           `distribute`.
//   finish  the old CA leaves the bundle (its files stay in pki/ca-previous.*). Then `distribute`.
// Stages run in this order; a stage resumes where a killed run stopped. The CA keys never leave
// pki/ except pki/ca.key, which distribute sends to control-plane machines as before. For the etcd
// CA the same three stages keep every etcd member and API server trusting its peers: on several
// control planes, distribute restarts the members one at a time, each meeting peers that trust it.
import { X509Certificate } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Inventory } from '../inventory.ts';
import { FailureError } from '../errors.ts';
import { PKI } from '../layout.ts';
import { CA_ROTATION_STAGES } from './check.ts';
import { caIdentities, profileOf, type CaName } from './identities.ts';
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

/** The files of one CA's rotation in pki/: the CA itself, the one joining, the one retired. */
interface RotationFiles {
  ca: { crt: string; key: string };
  next: { crt: string; key: string };
  previous: { crt: string; key: string };
}

/** Each CA's rotation files. */
export const ROTATION_FILES: Record<CaName, RotationFiles> = {
  ca: { ca: PKI.ca, next: PKI.caNext, previous: PKI.caPrevious },
  'etcd-ca': { ca: PKI.etcdCa, next: PKI.etcdCaNext, previous: PKI.etcdCaPrevious },
};

/** How output names a CA: "the cluster CA", "the etcd CA". */
export function caLabel(name: CaName): string {
  return name === 'ca' ? 'the cluster CA' : 'the etcd CA';
}

/** The command line of the next stage for a CA: `hardway certs --renew-ca --yes` or `... --renew-ca etcd-ca --yes`. */
export function renewCaLine(name: CaName): string {
  return `hardway certs --renew-ca${name === 'ca' ? '' : ` ${name}`} --yes`;
}

/** What the CA files of pki/ hold, read once. */
interface CaFiles {
  bundle: string[];
  key?: string;
  next?: { crt?: string; key?: string };
  previous?: { crt?: string; key?: string };
}

const same = (a: string | undefined, b: string | undefined) => a !== undefined && b !== undefined && a.trim() === b.trim();

function readCaFiles(dir: string, name: CaName): CaFiles {
  const F = ROTATION_FILES[name];
  const at = (p: string) => readOptional(join(dir, p));
  const crt = at(F.ca.crt);
  if (crt === undefined) throw new FailureError(`${F.ca.crt} is missing: there is no CA to rotate`, 'run hardway certs first');
  const pair = (files: { crt: string; key: string }) => {
    const c = at(files.crt);
    const k = at(files.key);
    return c === undefined && k === undefined ? undefined : { ...(c !== undefined ? { crt: c } : {}), ...(k !== undefined ? { key: k } : {}) };
  };
  const key = at(F.ca.key);
  const next = pair(F.next);
  const previous = pair(F.previous);
  const files: CaFiles = { bundle: pemBlocks(crt), ...(key !== undefined ? { key } : {}), ...(next ? { next } : {}), ...(previous ? { previous } : {}) };
  assertReadable(files, name);
  return files;
}

/** What to do about a CA file of pki/ that cannot be read: hardway never makes a CA in its place. */
const unreadableHint = (name: CaName) => `restore it from your backup of pki/ (hardway never replaces a CA: every certificate, kubeconfig and running component trusts it); then run ${renewCaLine(name)} again`;

/**
 * Every CA file of pki/ must parse before a stage decides anything or writes a file: a bundle with
 * a certificate node cannot read would otherwise be copied into the new bundle, and an unreadable
 * key would become pki/ca-previous.key. Refuses (exit 1) naming the file; nothing is written.
 */
function assertReadable(f: CaFiles, name: CaName): void {
  const F = ROTATION_FILES[name];
  const UNREADABLE_HINT = unreadableHint(name);
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
  badCrt(F.ca.crt, f.bundle.join(''));
  badKey(F.ca.key, f.key);
  badCrt(F.next.crt, f.next?.crt);
  badKey(F.next.key, f.next?.key);
  badCrt(F.previous.crt, f.previous?.crt);
  badKey(F.previous.key, f.previous?.key);
}

/** Which stage the CA files of pki/ call for; anything else is a failure that names what it found. */
export function rotationStage(dir: string, name: CaName = 'ca'): RotationStage {
  const F = ROTATION_FILES[name];
  const f = readCaFiles(dir, name);
  const prevInBundle = f.bundle.some((b) => same(b, f.previous?.crt));
  if (f.bundle.length === 1) return 'start';
  if (f.bundle.length === 2 && f.next?.crt !== undefined && f.next.key !== undefined && (same(f.bundle[1], f.next.crt) || prevInBundle)) return 'switch';
  if (f.bundle.length === 2 && f.next === undefined && same(f.bundle[1], f.previous?.crt)) return 'finish';
  throw new FailureError(
    `${F.ca.crt} holds ${f.bundle.length} certificates, but ${F.next.crt} and ${F.previous.crt} say no stage of a CA rotation; nothing was changed`,
    `restore pki/ from your backup, or put back the files of the stage you were at (see hardway certs --help)`,
  );
}

/** The line a stage adds for the user: what to run next. */
export function nextStep(stage: RotationStage, name: CaName = 'ca'): string {
  const F = ROTATION_FILES[name];
  const again = renewCaLine(name);
  const n = stageNumber(stage);
  const what = name === 'ca' ? 'CA rotation' : 'etcd CA rotation';
  switch (stage) {
    case 'start': return `${what} ${n} (start): ${F.ca.crt} trusts the old and the new CA, the old one still signs. Next: hardway distribute (every component restarts trusting both), then ${again} again`;
    case 'switch': return `${what} ${n} (switch): the new CA signs, every certificate of ${caLabel(name)} was reissued, the old CA is still trusted. Next: hardway distribute, then ${again} again`;
    default: return `${what} ${n} (finish): ${F.ca.crt} holds the new CA only; the old one is kept in ${F.previous.crt} and ${F.previous.key} (move them away before another rotation). Next: hardway distribute`;
  }
}

/**
 * Does one stage's work on pki/'s CA files (the caller holds the project's lock, reissues the
 * leaves after `switch` and rewrites the kubeconfigs after every stage). Every write is atomic, and
 * a rerun after a kill finds the stage half done and completes it.
 */
export async function rotateCa(inv: Inventory, now: Date, stage: RotationStage, name: CaName = 'ca'): Promise<PkiReport> {
  const F = ROTATION_FILES[name];
  const again = renewCaLine(name);
  const f = readCaFiles(inv.dir, name);
  const lines = [];
  const ca = caIdentities().find((c) => c.name === name)!;
  if (stage === 'start') {
    if (f.previous !== undefined) {
      throw new FailureError(`${F.previous.crt} or ${F.previous.key} exists: the CA an earlier rotation retired; nothing was changed`,
        `move both files out of pki/ (keep them if anything still needs that CA), then run ${again} again`);
    }
    let next = f.next?.crt !== undefined && f.next.key !== undefined ? f.next : undefined;
    const writes: PkiWrite[] = [];
    if (!next) {
      const key = await generateKey(inv.settings.keyAlgorithm);
      // node-forge is loaded only when a certificate is issued (a no-op run never needs it).
      const { issueCertificate } = await import('./issue.ts');
      const crt = issueCertificate(profileOf(ca), key.publicKey, { selfKey: key.privateKey }, { now, validityDays: inv.settings.certValidityDays });
      // Key first: a certificate without its key is never left behind.
      writes.push({ pkiPath: F.next.key, content: key.pem, mode: SECRET_MODE }, { pkiPath: F.next.crt, content: crt, mode: PUBLIC_MODE });
      next = { crt, key: key.pem };
      lines.push(doneLine(`issued the new CA ${F.next.crt} (serial ${serialOf(crt)})`));
    }
    writes.push({ pkiPath: F.ca.crt, content: f.bundle[0]! + pemBlocks(next.crt!)[0]!, mode: PUBLIC_MODE });
    writePkiFiles(inv.dir, writes);
    lines.push(doneLine(`${F.ca.crt} now trusts both CAs (the old one, serial ${serialOf(f.bundle[0]!)}, still signs)`));
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
        throw new FailureError(`${F.previous.crt} or ${F.previous.key} exists: the CA an earlier rotation retired; nothing was changed`,
          `move both files out of pki/ (keep them if anything still needs that CA), then run ${again} again`);
      }
      if (f.key === undefined) {
        throw new FailureError(`${F.ca.key} is not in pki/ (kept offline?): the switch keeps it as ${F.previous.key}; nothing was changed`, `put it back in pki/, then run ${again} again`);
      }
      if (!keyMatches(first, f.key)) {
        throw new FailureError(`${F.ca.key} does not match the first certificate of ${F.ca.crt}; nothing was changed`, 'restore pki/ from your backup');
      }
      writes.push({ pkiPath: F.previous.key, content: f.key, mode: SECRET_MODE }, { pkiPath: F.previous.crt, content: first, mode: PUBLIC_MODE });
    }
    const previous = prevInBundle ? (same(first, f.previous?.crt) ? first : second) : first;
    // Key, then bundle: between the two a rerun resumes here (ca-next.* and ca-previous.* both exist).
    writes.push({ pkiPath: F.ca.key, content: nextKey, mode: SECRET_MODE }, { pkiPath: F.ca.crt, content: pemBlocks(nextCrt)[0]! + previous, mode: PUBLIC_MODE });
    writePkiFiles(inv.dir, writes);
    for (const p of [F.next.crt, F.next.key]) rmSync(join(inv.dir, p), { force: true });
    lines.push(doneLine(`the new CA (serial ${serialOf(nextCrt)}) signs now; the old one (serial ${serialOf(previous)}) is kept as ${F.previous.crt} and still trusted`));
    return { lines, warnings: [] };
  }
  writePkiFiles(inv.dir, [{ pkiPath: F.ca.crt, content: f.bundle[0]!, mode: PUBLIC_MODE }]);
  lines.push(doneLine(`${F.ca.crt} trusts the new CA only (serial ${serialOf(f.bundle[0]!)})`));
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
