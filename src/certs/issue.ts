// Issuing one certificate: pure given the keys and a clock. The TBSCertificate is built with
// forge's ASN.1 encoder and signed with node:crypto, which handles RSA and ECDSA alike.
import forge from 'node-forge';
import { pemBlocks, toPem } from './pem.ts';
import { randomBytes, sign, type KeyObject } from 'node:crypto';
import {
  bitString, der, parseDer, extensions, integer, keyIdentifier, name, publicKeyInfo, seq, signatureAlgorithm, validity,
  type DistinguishedName, type Usage,
} from './asn1.ts';
import { spki } from './keys.ts';

/** What a certificate must say. */
export interface CertificateProfile {
  subject: DistinguishedName;
  /** `DNS:name` or `IP:a.b.c.d`, in the order they are written. */
  sans: string[];
  usages: Usage[];
  /** True for a CA certificate (keyCertSign + cRLSign, CA:TRUE); false for a leaf. */
  ca: boolean;
}

/** The CA that signs: its certificate (whose subject becomes the issuer name) and private key. */
export interface Signer {
  certificatePem: string;
  privateKey: KeyObject;
}

/** The clock and randomness an issue uses, passed in so tests can fix them. */
export interface IssueContext {
  now: Date;
  validityDays: number;
  /** Serial number bytes; random 16 bytes when absent. */
  serial?: Buffer;
}

const DAY_MS = 86_400_000;
// Machines' clocks may lag the jumpbox's by a little: a certificate that is "not yet valid" for a
// minute breaks TLS at the worst moment, so notBefore is set slightly in the past.
const BACKDATE_MS = 5 * 60_000;

/**
 * Issues a certificate for `subjectKey` (public or private key object). With `signer` undefined
 * the certificate is self-signed by `selfKey`, which must then be the subject's private key.
 */
export function issueCertificate(
  profile: CertificateProfile,
  subjectKey: KeyObject,
  signer: Signer | { selfKey: KeyObject },
  ctx: IssueContext,
): string {
  const subjectSpki = spki(subjectKey);
  const subjectKeyId = keyIdentifier(subjectSpki);
  const signingKey = 'selfKey' in signer ? signer.selfKey : signer.privateKey;
  const issuer = 'selfKey' in signer ? { name: name(profile.subject), keyId: undefined } : issuerOf(signer.certificatePem);
  const keyType = signingKey.asymmetricKeyType === 'ec' ? 'ec' : 'rsa';
  const now = Math.floor(ctx.now.getTime() / 1000) * 1000;
  const tbs = seq([
    forge.asn1.create(forge.asn1.Class.CONTEXT_SPECIFIC, 0, true, [integer(Buffer.from([2]))]),
    integer(ctx.serial ?? randomSerial()),
    signatureAlgorithm(keyType),
    issuer.name,
    validity(new Date(now - BACKDATE_MS), new Date(now + ctx.validityDays * DAY_MS)),
    name(profile.subject),
    publicKeyInfo(subjectSpki),
    extensions({ ca: profile.ca, usages: profile.usages, sans: profile.sans, subjectKeyId, authorityKeyId: issuer.keyId }),
  ]);
  const tbsDer = der(tbs);
  const signature = sign('sha256', tbsDer, signingKey);
  const certDer = der(seq([tbs, signatureAlgorithm(keyType), bitString(signature)]));
  return toPem(certDer);
}

/** 16 random bytes as a positive serial: top bit clear (positive), next bit set (minimal DER). */
function randomSerial(): Buffer {
  const b = randomBytes(16);
  b[0] = (b[0]! & 0x3f) | 0x40;
  return b;
}

/** The issuer name (the CA certificate's subject, byte for byte) and the CA's subject key id. */
function issuerOf(caPem: string): { name: forge.asn1.Asn1; keyId: Buffer } {
  // pki/ca.crt may be a bundle (during a CA rotation): the signing CA is its first certificate.
  const caDer = Buffer.from(pemBlocks(caPem)[0]!.replace(/-----[^-]+-----|\s/g, ''), 'base64');
  const cert = parseDer(caDer);
  const tbs = (cert.value as forge.asn1.Asn1[])[0]!.value as forge.asn1.Asn1[];
  const fields = tbs[0]!.tagClass === forge.asn1.Class.CONTEXT_SPECIFIC ? tbs.slice(1) : tbs;
  const subject = fields[4]!;
  const caSpki = der(fields[5]!);
  return { name: subject, keyId: subjectKeyIdOf(tbs) ?? keyIdentifier(caSpki) };
}

/** The subjectKeyIdentifier extension's value, if the certificate has one (AKI must repeat it exactly). */
function subjectKeyIdOf(tbs: forge.asn1.Asn1[]): Buffer | undefined {
  const ext = tbs.find((n) => n.tagClass === forge.asn1.Class.CONTEXT_SPECIFIC && n.type === 3);
  if (!ext) return undefined;
  for (const e of ((ext.value as forge.asn1.Asn1[])[0]!.value as forge.asn1.Asn1[])) {
    const parts = e.value as forge.asn1.Asn1[];
    if (forge.asn1.derToOid(forge.util.createBuffer(parts[0]!.value as string)) !== '2.5.29.14') continue;
    const inner = forge.asn1.fromDer(forge.util.createBuffer(parts[parts.length - 1]!.value as string));
    return Buffer.from(inner.value as string, 'binary');
  }
  return undefined;
}
