// The X.509 pieces hardway puts in a certificate, built with node-forge's ASN.1 encoder. We build
// the structures ourselves (instead of forge.pki's certificate object) because forge's certificate
// code only knows RSA keys, and hardway also issues ECDSA P-256 certificates.
import forge from 'node-forge';
import { createHash } from 'node:crypto';
import { parseIPv4 } from '../net/ipv4.ts';

const { asn1 } = forge;
type Node = forge.asn1.Asn1;
const U = asn1.Class.UNIVERSAL;
const T = asn1.Type;

/** A distinguished name as hardway uses it: a common name and an optional organisation. */
export interface DistinguishedName {
  CN: string;
  O?: string;
}

/** Extended key usages hardway issues. */
export type Usage = 'serverAuth' | 'clientAuth';

const OID = {
  commonName: '2.5.4.3',
  organization: '2.5.4.10',
  basicConstraints: '2.5.29.19',
  keyUsage: '2.5.29.15',
  extKeyUsage: '2.5.29.37',
  subjectAltName: '2.5.29.17',
  subjectKeyId: '2.5.29.14',
  authorityKeyId: '2.5.29.35',
  serverAuth: '1.3.6.1.5.5.7.3.1',
  clientAuth: '1.3.6.1.5.5.7.3.2',
  sha256WithRSA: '1.2.840.113549.1.1.11',
  ecdsaWithSHA256: '1.2.840.10045.4.3.2',
} as const;

/** An OBJECT IDENTIFIER node. */
export const oid = (dotted: string): Node => asn1.create(U, T.OID, false, asn1.oidToDer(dotted).getBytes());
/** A SEQUENCE node. */
export const seq = (items: Node[]): Node => asn1.create(U, T.SEQUENCE, true, items);
/** A DER-encoded node as a Buffer. */
export const der = (node: Node): Buffer => Buffer.from(asn1.toDer(node).getBytes(), 'binary');
/** A BIT STRING with no unused bits, holding `bytes`. */
export const bitString = (bytes: Buffer): Node => asn1.create(U, T.BITSTRING, false, '\x00' + bytes.toString('binary'));
/** A positive INTEGER from big-endian bytes (the caller keeps the top bit clear). */
export const integer = (bytes: Buffer): Node => asn1.create(U, T.INTEGER, false, bytes.toString('binary'));

/** Name ::= SEQUENCE OF SET OF AttributeTypeAndValue, CN first then O, as UTF8String. */
export function name(dn: DistinguishedName): Node {
  const rdn = (type: string, value: string) =>
    asn1.create(U, T.SET, true, [seq([oid(type), asn1.create(U, T.UTF8, false, forge.util.encodeUtf8(value))])]);
  return seq([rdn(OID.commonName, dn.CN), ...(dn.O === undefined ? [] : [rdn(OID.organization, dn.O)])]);
}

/** Validity: UTCTime before 2050, GeneralizedTime from 2050 on (RFC 5280 4.1.2.5). */
export function validity(notBefore: Date, notAfter: Date): Node {
  const time = (d: Date) =>
    d.getUTCFullYear() < 2050
      ? asn1.create(U, T.UTCTIME, false, asn1.dateToUtcTime(d))
      : asn1.create(U, T.GENERALIZEDTIME, false, asn1.dateToGeneralizedTime(d));
  return seq([time(notBefore), time(notAfter)]);
}

/** The AlgorithmIdentifier of a SHA-256 signature made with the issuer's key type. */
export function signatureAlgorithm(issuerKeyType: 'rsa' | 'ec'): Node {
  return issuerKeyType === 'rsa'
    ? seq([oid(OID.sha256WithRSA), asn1.create(U, T.NULL, false, '')])
    : seq([oid(OID.ecdsaWithSHA256)]);
}

// forge's parser can leave BIT STRINGs undecoded (its typings predate that option). Undecoded, a
// parsed structure re-encodes byte for byte, which a public key and a name must.
const fromDerOptions = asn1.fromDer as unknown as (bytes: forge.util.ByteStringBuffer, options: { decodeBitStrings: boolean }) => Node;

/** Parses DER into forge nodes, keeping bit strings raw. */
export function parseDer(bytes: Buffer): Node {
  return fromDerOptions(forge.util.createBuffer(bytes.toString('binary')), { decodeBitStrings: false });
}

/** SubjectPublicKeyInfo as forge nodes, from its DER. */
export function publicKeyInfo(spkiDer: Buffer): Node {
  return parseDer(spkiDer);
}

/** The key identifier of a public key: SHA-1 of the subjectPublicKey bits (RFC 5280 4.2.1.2, method 1). */
export function keyIdentifier(spkiDer: Buffer): Buffer {
  const info = publicKeyInfo(spkiDer).value as Node[];
  const bits = Buffer.from(info[1]!.value as string, 'binary').subarray(1);
  return createHash('sha1').update(bits).digest();
}

function extension(id: string, critical: boolean, value: Node): Node {
  return seq([
    oid(id),
    ...(critical ? [asn1.create(U, T.BOOLEAN, false, '\xff')] : []),
    asn1.create(U, T.OCTETSTRING, false, asn1.toDer(value).getBytes()),
  ]);
}

/** What the extensions of one certificate say. */
export interface ExtensionSpec {
  ca: boolean;
  usages: Usage[];
  sans: string[];
  subjectKeyId: Buffer;
  authorityKeyId?: Buffer;
}

/** The [3] EXPLICIT Extensions of a TBSCertificate. */
export function extensions(spec: ExtensionSpec): Node {
  const list: Node[] = [];
  list.push(extension(OID.basicConstraints, true, seq(spec.ca ? [asn1.create(U, T.BOOLEAN, false, '\xff')] : [])));
  // keyUsage bits, most significant first: digitalSignature(0) keyEncipherment(2) | keyCertSign(5) cRLSign(6).
  // DER drops trailing zero bits, so the first byte says how many of the last octet's bits are unused.
  const usage = spec.ca ? '\x01\x06' : '\x05\xa0';
  list.push(extension(OID.keyUsage, true, asn1.create(U, T.BITSTRING, false, usage)));
  if (spec.usages.length > 0) list.push(extension(OID.extKeyUsage, false, seq(spec.usages.map((u) => oid(OID[u])))));
  if (spec.sans.length > 0) list.push(extension(OID.subjectAltName, false, seq(spec.sans.map(generalName))));
  list.push(extension(OID.subjectKeyId, false, asn1.create(U, T.OCTETSTRING, false, spec.subjectKeyId.toString('binary'))));
  if (spec.authorityKeyId) {
    const keyId = asn1.create(asn1.Class.CONTEXT_SPECIFIC, 0, false, spec.authorityKeyId.toString('binary'));
    list.push(extension(OID.authorityKeyId, false, seq([keyId])));
  }
  return asn1.create(asn1.Class.CONTEXT_SPECIFIC, 3, true, [seq(list)]);
}

/** A subjectAltName entry from its text form: `DNS:name` -> dNSName [2], `IP:a.b.c.d` -> iPAddress [7]. */
function generalName(san: string): Node {
  const [kind, value] = [san.slice(0, san.indexOf(':')), san.slice(san.indexOf(':') + 1)];
  if (kind === 'DNS') return asn1.create(asn1.Class.CONTEXT_SPECIFIC, 2, false, value);
  const ip = parseIPv4(value);
  if (kind !== 'IP' || ip === undefined) throw new Error(`unsupported subjectAltName ${san}`);
  const bytes = Buffer.alloc(4);
  bytes.writeUInt32BE(ip);
  return asn1.create(asn1.Class.CONTEXT_SPECIFIC, 7, false, bytes.toString('binary'));
}
