// Issuing one certificate, pure, with fixture keys and a fixed clock; openssl is the judge.
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { issueCertificate, type CertificateProfile } from '../../src/certs/issue.ts';
import { keyFromPem } from '../../src/certs/keys.ts';
import { openssl, opensslKeyMatches, opensslText, opensslVerifies } from './certs.helpers.ts';

const fixture = (name: string) => keyFromPem(readFileSync(new URL(`../fixtures/keys/${name}.key`, import.meta.url), 'utf8'));
const CA: CertificateProfile = { subject: { CN: 'CA' }, sans: [], usages: [], ca: true };
const NODE: CertificateProfile = {
  subject: { CN: 'system:node:node-0', O: 'system:nodes' },
  sans: ['DNS:node-0', 'DNS:node-0.kubernetes.local', 'IP:127.0.0.1', 'IP:10.240.0.20'],
  usages: ['clientAuth', 'serverAuth'],
  ca: false,
};
const NOW = new Date('2025-06-01T12:00:00.500Z');

for (const kind of ['rsa', 'ec'] as const) {
  describe(`issuing with ${kind} fixture keys`, () => {
    const dir = mkdtempSync(join(tmpdir(), `hardway-issue-${kind}-`));
    const caKey = fixture(`ca-${kind}`);
    const leafKey = fixture(`leaf-${kind}`);
    const caPem = issueCertificate(CA, caKey.publicKey, { selfKey: caKey.privateKey }, { now: NOW, validityDays: 3653 });
    const leafPem = issueCertificate(NODE, leafKey.publicKey, { certificatePem: caPem, privateKey: caKey.privateKey }, { now: NOW, validityDays: 3653 });
    const files = { ca: join(dir, 'ca.crt'), leaf: join(dir, 'leaf.crt'), key: join(dir, 'leaf.key') };
    writeFileSync(files.ca, caPem);
    writeFileSync(files.leaf, leafPem);
    writeFileSync(files.key, leafKey.pem);

    it('openssl verifies the leaf against the CA (strict X.509 checks)', () => {
      expect(opensslVerifies(files.ca, files.leaf)).toBe(true);
      expect(opensslVerifies(files.ca, files.ca)).toBe(true);
    });

    it('the CA is CA:TRUE critical with keyCertSign+cRLSign critical and a subject key id', () => {
      const text = opensslText(files.ca);
      expect(text).toMatch(/Subject: CN ?= ?CA\n/);
      expect(text).toMatch(/Issuer: CN ?= ?CA\n/);
      expect(text).toMatch(/Basic Constraints: critical\s+CA:TRUE/);
      expect(text).toMatch(/Key Usage: critical\s+Certificate Sign, CRL Sign\n/);
      expect(text).toMatch(/Subject Key Identifier:/);
    });

    it('the leaf says exactly what its profile says', () => {
      const text = opensslText(files.leaf);
      expect(text).toMatch(/Subject: CN ?= ?system:node:node-0, O ?= ?system:nodes\n/);
      expect(text).toMatch(/Basic Constraints: critical\s+CA:FALSE/);
      expect(text).toMatch(/Key Usage: critical\s+Digital Signature, Key Encipherment\n/);
      expect(text).toMatch(/Extended Key Usage:\s+TLS Web Client Authentication, TLS Web Server Authentication\n/);
      expect(text).toMatch(/Alternative Name:\s+DNS:node-0, DNS:node-0.kubernetes.local, IP Address:127.0.0.1, IP Address:10.240.0.20\n/);
      expect(text).toMatch(/Authority Key Identifier:/);
      expect(text).toMatch(kind === 'rsa' ? /Signature Algorithm: sha256WithRSAEncryption/ : /Signature Algorithm: ecdsa-with-SHA256/);
      expect(text).toMatch(kind === 'rsa' ? /Public-Key: \(2048 bit\)/ : /NIST CURVE: P-256/);
    });

    it("the leaf's authority key id is the CA's subject key id", () => {
      const ski = /Subject Key Identifier:\s+([0-9A-F:]+)/.exec(opensslText(files.ca))![1];
      const aki = /Authority Key Identifier:\s+(?:keyid:)?([0-9A-F:]+)/.exec(opensslText(files.leaf))![1];
      expect(aki).toBe(ski);
    });

    it('the certificate carries the public half of the key it was issued for', () => {
      expect(opensslKeyMatches(files.leaf, files.key)).toBe(true);
      expect(new X509Certificate(leafPem).checkPrivateKey(caKey.privateKey)).toBe(false);
    });

    it('validity runs from 5 minutes before the clock to exactly validityDays (3653) after it, serial positive', () => {
      const dates = openssl('x509', '-noout', '-startdate', '-enddate', '-serial', '-in', files.leaf);
      expect(dates).toContain('notBefore=Jun  1 11:55:00 2025 GMT');
      expect(dates).toContain('notAfter=Jun  2 12:00:00 2035 GMT');
      const serial = /serial=([0-9A-F]+)/.exec(dates)![1]!;
      expect(parseInt(serial.slice(0, 2), 16)).toBeLessThan(0x80);
    });
  });
}

describe('issuing details', () => {
  const ca = fixture('ca-ec');
  it('two issues give two different random serials; a given serial is used as is', () => {
    const a = issueCertificate(CA, ca.publicKey, { selfKey: ca.privateKey }, { now: NOW, validityDays: 1 });
    const b = issueCertificate(CA, ca.publicKey, { selfKey: ca.privateKey }, { now: NOW, validityDays: 1 });
    expect(new X509Certificate(a).serialNumber).not.toBe(new X509Certificate(b).serialNumber);
    const c = issueCertificate(CA, ca.publicKey, { selfKey: ca.privateKey }, { now: NOW, validityDays: 1, serial: Buffer.from([0x42, 0x01]) });
    expect(new X509Certificate(c).serialNumber).toBe('4201');
  });

  it('dates from 2050 on are written as GeneralizedTime and read back right', () => {
    const pem = issueCertificate(CA, ca.publicKey, { selfKey: ca.privateKey }, { now: NOW, validityDays: 36500 });
    expect(new Date(new X509Certificate(pem).validTo).getUTCFullYear()).toBe(2125);
  });

  it('an RSA CA signs an ECDSA leaf (and the other way round) correctly', () => {
    const dir = mkdtempSync(join(tmpdir(), 'hardway-issue-mixed-'));
    const rsaCa = fixture('ca-rsa');
    const caPem = issueCertificate(CA, rsaCa.publicKey, { selfKey: rsaCa.privateKey }, { now: NOW, validityDays: 3653 });
    const leafPem = issueCertificate(NODE, fixture('leaf-ec').publicKey, { certificatePem: caPem, privateKey: rsaCa.privateKey }, { now: NOW, validityDays: 3653 });
    writeFileSync(join(dir, 'ca.crt'), caPem);
    writeFileSync(join(dir, 'leaf.crt'), leafPem);
    expect(opensslVerifies(join(dir, 'ca.crt'), join(dir, 'leaf.crt'))).toBe(true);
    expect(opensslText(join(dir, 'leaf.crt'))).toMatch(/Signature Algorithm: sha256WithRSAEncryption/);
  });
});
