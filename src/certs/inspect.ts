// Compares a certificate and key found in pki/ with what the inventory says they must be. Both
// `hardway certs` (what to reissue) and `hardway certs check` (what is wrong) read this verdict.
import { X509Certificate, createPrivateKey, type KeyObject } from 'node:crypto';
import type { KeyAlgorithm } from '../cluster-settings.ts';
import type { Usage } from './asn1.ts';
import { formatSubject } from './identities.ts';
import type { CertificateProfile } from './issue.ts';
import { algorithmOf } from './keys.ts';

/** One way in which a certificate differs from what it must be. */
export interface Difference {
  kind: 'missing' | 'key-missing' | 'unreadable' | 'key-unreadable' | 'subject' | 'sans' | 'usages' | 'ca-flag'
    | 'issuer' | 'algorithm' | 'key-mismatch' | 'not-yet-valid';
  /** For people: "SANs changed: +IP:10.240.0.99 -IP:10.240.0.21". Never holds secret material. */
  text: string;
}

/** The verdict on one certificate: its differences and, when readable, its expiry. */
export interface Inspection {
  differences: Difference[];
  certificate?: X509Certificate;
  key?: KeyObject;
  notAfter?: Date;
  /** Whole days from `now` to notAfter, counted towards zero (negative once expired a whole day). */
  daysLeft?: number;
  /** True once notAfter has passed (daysLeft is 0 during the first day after). */
  expired?: boolean;
  /** When it starts to be valid; after `now` it is a difference ('not-yet-valid'). */
  notBefore?: Date;
}

/** What is found on disk and what it is compared with. */
export interface InspectInput {
  profile: CertificateProfile;
  crtPem?: string;
  keyPem?: string;
  /** The CA that must have signed it, or 'self' for a CA certificate; undefined when that CA is not made yet. */
  issuer: X509Certificate | 'self' | undefined;
  /** The key algorithm the settings ask for; undefined to accept any. */
  keyAlgorithm?: KeyAlgorithm;
  now: Date;
}

const USAGE_OIDS: Record<string, Usage> = { '1.3.6.1.5.5.7.3.1': 'serverAuth', '1.3.6.1.5.5.7.3.2': 'clientAuth' };

/**
 * Private keys parsed in this process, by their PEM text: `up` checks every pair twice (certs, then
 * kubeconfigs), and parsing the RSA keys was most of that check's CPU. KeyObjects are immutable.
 */
const parsedKeys = new Map<string, KeyObject>();

function privateKey(pem: string): KeyObject {
  let key = parsedKeys.get(pem);
  if (!key) parsedKeys.set(pem, (key = createPrivateKey(pem)));
  return key;
}

/**
 * A certificate from PEM text, or undefined when it is not one hardway can read: node parses a
 * certificate lazily, so one whose public key (or dates, names, usages) is malformed parses here
 * but would throw later. Every field hardway reads is read once here.
 */
export function readableCertificate(pem: string): X509Certificate | undefined {
  try {
    const cert = new X509Certificate(pem);
    for (const field of [cert.publicKey, cert.subject, cert.issuer, cert.subjectAltName, cert.keyUsage, cert.ca, cert.serialNumber]) void field;
    if (Number.isNaN(Date.parse(cert.validFrom)) || Number.isNaN(Date.parse(cert.validTo))) return undefined;
    return cert;
  } catch {
    return undefined;
  }
}

/** Whole days from `now` until `when`, counted towards zero: 1.5 days ahead is 1, 1.5 days past is -1. */
export function daysUntil(when: Date, now: Date): number {
  return Math.trunc((when.getTime() - now.getTime()) / 86_400_000) || 0;
}

/** "expired 3 days ago" (whole days past), "expired today" within the first day. */
export function expiredText(notAfter: Date, now: Date): string {
  const days = -daysUntil(notAfter, now);
  return days === 0 ? 'expired today' : `expired ${days} day${days === 1 ? '' : 's'} ago`;
}

/** Inspects one certificate/key pair. Pure apart from parsing; reads no files. */
export function inspect(input: InspectInput): Inspection {
  const differences: Difference[] = [];
  const add = (kind: Difference['kind'], text: string) => differences.push({ kind, text });
  if (input.crtPem === undefined) add('missing', 'certificate missing');
  let key: KeyObject | undefined;
  if (input.keyPem === undefined) add('key-missing', 'key missing');
  else {
    try {
      key = privateKey(input.keyPem);
    } catch {
      add('key-unreadable', 'key unreadable');
    }
  }
  if (input.crtPem === undefined) return { differences, ...(key ? { key } : {}) };
  const cert = readableCertificate(input.crtPem);
  if (cert === undefined) {
    add('unreadable', 'certificate unreadable (it does not parse as an X.509 certificate with a public key hardway can read)');
    return { differences, ...(key ? { key } : {}) };
  }
  const { profile } = input;
  const subject = cert.subject.split('\n').join(', ');
  if (subject !== formatSubject(profile.subject)) add('subject', `subject changed: ${subject} -> ${formatSubject(profile.subject)}`);
  const sans = parseSans(cert.subjectAltName);
  const sanDelta = delta(sans, profile.sans);
  if (sanDelta) add('sans', `SANs changed: ${sanDelta}`);
  const usages = (cert.keyUsage ?? []).map((o) => USAGE_OIDS[o] ?? o);
  const usageDelta = delta(usages, profile.usages);
  if (usageDelta) add('usages', `extended key usage changed: ${usageDelta}`);
  if (cert.ca !== profile.ca) add('ca-flag', profile.ca ? 'not a CA certificate' : 'is a CA certificate, expected a leaf');
  const chain = chainOf(cert, input.issuer);
  if (chain === 'other-ca') add('issuer', input.issuer === 'self' ? 'not self-signed' : 'signed by a different CA');
  if (chain === 'bad-signature') add('issuer', `signature does not verify with ${input.issuer === 'self' ? 'its own key' : "its CA's key"} (altered?)`);
  const algorithm = algorithmOf(cert.publicKey);
  if (input.keyAlgorithm && algorithm !== input.keyAlgorithm) add('algorithm', `key algorithm changed: ${algorithm} -> ${input.keyAlgorithm}`);
  if (key && !cert.checkPrivateKey(key)) add('key-mismatch', 'key does not match certificate');
  // A certificate from a clock running ahead, or made to start later, fails TLS until then.
  const notBefore = new Date(cert.validFrom);
  if (notBefore.getTime() > input.now.getTime()) add('not-yet-valid', `not valid yet: valid from ${notBefore.toISOString()} (${untilText(notBefore, input.now)})`);
  const notAfter = new Date(cert.validTo);
  const daysLeft = daysUntil(notAfter, input.now);
  return { differences, certificate: cert, ...(key ? { key } : {}), notBefore, notAfter, daysLeft, expired: notAfter.getTime() <= input.now.getTime() };
}

/** Whether `cert` names `issuer` (issuer name and key id) and carries a valid signature of its key. */
function chainOf(cert: X509Certificate, issuer: X509Certificate | 'self' | undefined): 'ok' | 'other-ca' | 'bad-signature' {
  if (issuer === undefined) return 'other-ca';
  const ca = issuer === 'self' ? cert : issuer;
  try {
    if (!cert.checkIssued(ca)) return 'other-ca';
    return cert.verify(ca.publicKey) ? 'ok' : 'bad-signature';
  } catch {
    return 'bad-signature';
  }
}

/** How far ahead a time is, as people say it: "in 3 days", "in 2 hours", "in 5 minutes". */
export function untilText(when: Date, now: Date): string {
  const minutes = Math.ceil((when.getTime() - now.getTime()) / 60_000);
  if (minutes >= 2 * 24 * 60) return `in ${Math.floor(minutes / (24 * 60))} days`;
  if (minutes >= 120) return `in ${Math.floor(minutes / 60)} hours`;
  return `in ${minutes} minute${minutes === 1 ? '' : 's'}`;
}

/** Node prints SANs as `DNS:a, IP Address:1.2.3.4`; hardway writes them `DNS:a`, `IP:1.2.3.4`. */
export function parseSans(text: string | undefined): string[] {
  if (!text) return [];
  return text.split(', ').map((s) => s.replace(/^IP Address:/, 'IP:'));
}

/** `+added -removed` between two lists compared as sets, or '' when they hold the same entries. */
function delta(actual: string[], expected: string[]): string {
  const added = expected.filter((e) => !actual.includes(e)).map((e) => `+${e}`);
  const removed = actual.filter((a) => !expected.includes(a)).map((a) => `-${a}`);
  return [...added, ...removed].join(' ');
}
