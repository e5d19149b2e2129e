// `hardway certs` through main(): the full set for the example cluster, judged by openssl.
import { statSync } from 'node:fs';
import { Writable } from 'node:stream';
import { preparePki } from '../../src/commands/prepare-pki.ts';
import { loadInventory } from '../../src/inventory.ts';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { hardway, makeProject, openssl, opensslKeyMatches, opensslText, opensslVerifies, pkiName } from './certs.helpers.ts';

const LEAVES = ['admin', 'node-0/kubelet', 'node-1/kubelet', 'kube-proxy', 'kube-controller-manager', 'kube-scheduler',
  'kube-api-server', 'service-accounts', 'server/etcd-server', 'etcd-client'];

/** What each certificate must say, as openssl prints it. */
const EXPECTED: Record<string, { subject: string; sans?: string; eku: string }> = {
  admin: { subject: 'CN=admin, O=system:masters', eku: 'TLS Web Client Authentication' },
  'node-0/kubelet': {
    subject: 'CN=system:node:node-0, O=system:nodes',
    sans: 'DNS:node-0, DNS:node-0.kubernetes.local, IP Address:127.0.0.1, IP Address:10.240.0.20',
    eku: 'TLS Web Client Authentication, TLS Web Server Authentication',
  },
  'node-1/kubelet': {
    subject: 'CN=system:node:node-1, O=system:nodes',
    sans: 'DNS:node-1, DNS:node-1.kubernetes.local, IP Address:127.0.0.1, IP Address:10.240.0.21',
    eku: 'TLS Web Client Authentication, TLS Web Server Authentication',
  },
  'kube-proxy': { subject: 'CN=system:kube-proxy, O=system:node-proxier', sans: 'DNS:kube-proxy, IP Address:127.0.0.1', eku: 'TLS Web Client Authentication, TLS Web Server Authentication' },
  'kube-controller-manager': {
    subject: 'CN=system:kube-controller-manager, O=system:kube-controller-manager',
    sans: 'DNS:kube-controller-manager, IP Address:127.0.0.1', eku: 'TLS Web Client Authentication, TLS Web Server Authentication',
  },
  'kube-scheduler': {
    subject: 'CN=system:kube-scheduler, O=system:kube-scheduler',
    sans: 'DNS:kube-scheduler, IP Address:127.0.0.1', eku: 'TLS Web Client Authentication, TLS Web Server Authentication',
  },
  'kube-api-server': {
    subject: 'CN=kubernetes',
    sans: 'IP Address:127.0.0.1, IP Address:10.32.0.1, IP Address:10.240.0.10, DNS:kubernetes, DNS:kubernetes.default, ' +
      'DNS:kubernetes.default.svc, DNS:kubernetes.default.svc.cluster, DNS:kubernetes.default.svc.cluster.local, ' +
      'DNS:server.kubernetes.local, DNS:server',
    eku: 'TLS Web Client Authentication, TLS Web Server Authentication',
  },
  'service-accounts': { subject: 'CN=service-accounts', eku: 'TLS Web Client Authentication' },
  'server/etcd-server': {
    subject: 'CN=server', sans: 'IP Address:10.240.0.10, IP Address:127.0.0.1, DNS:server, DNS:server.kubernetes.local, DNS:localhost',
    eku: 'TLS Web Server Authentication, TLS Web Client Authentication',
  },
  'etcd-client': { subject: 'CN=kube-apiserver-etcd-client', eku: 'TLS Web Client Authentication' },
};

describe('hardway certs on a fresh project (ecdsa-p256)', () => {
  const project = makeProject({ cluster: 'keyAlgorithm: ecdsa-p256\n' });
  const pki = (f: string) => join(project.dir, 'pki', f);
  const file = (n: string, ext: string) => pki(`${pkiName(n)}.${ext}`);
  let out = '';
  beforeAll(async () => {
    const run = await hardway(project, 'certs');
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    out = run.stdout;
  });

  it('prints one "issued <name> (new)" line per certificate, CAs first', () => {
    expect(out.trim().split('\n')).toEqual([`making ${LEAVES.length + 2} new key(s) and certificate(s) in pki/...`, ...['ca', 'etcd-ca', ...LEAVES].map((n) => `issued ${n} (new)`)]);
  });

  it('pki/ is 0700, keys 0600, and no key material is printed', () => {
    expect(statSync(join(project.dir, 'pki')).mode & 0o777).toBe(0o700);
    for (const n of ['ca', 'etcd-ca', ...LEAVES]) expect(statSync(file(n, 'key')).mode & 0o777).toBe(0o600);
    for (const d of ['machines', 'machines/node-0', 'machines/server']) expect(statSync(pki(d)).mode & 0o777).toBe(0o700);
    expect(out).not.toMatch(/BEGIN|PRIVATE/);
  });

  it('every certificate verifies against its own CA with openssl, and not against the other CA', () => {
    for (const n of LEAVES) {
      const [own, other] = n.includes('etcd-') ? ['etcd-ca.crt', 'ca.crt'] : ['ca.crt', 'etcd-ca.crt'];
      expect(opensslVerifies(pki(own), file(n, 'crt')), `${n} against ${own}`).toBe(true);
      expect(opensslVerifies(pki(other), file(n, 'crt')), `${n} against ${other}`).toBe(false);
    }
  });

  it('each CA is self-signed CN=CA / CN=etcd-ca, CA:TRUE, with ECDSA P-256 keys', () => {
    for (const [n, cn] of [['ca', 'CA'], ['etcd-ca', 'etcd-ca']] as const) {
      const text = opensslText(pki(`${n}.crt`));
      expect(text).toMatch(new RegExp(`Subject: CN ?= ?${cn}\\n`));
      expect(text).toMatch(/Basic Constraints: critical\s+CA:TRUE/);
      expect(text).toMatch(/Key Usage: critical\s+Certificate Sign, CRL Sign/);
      expect(text).toMatch(/NIST CURVE: P-256/);
      expect(opensslKeyMatches(pki(`${n}.crt`), pki(`${n}.key`))).toBe(true);
    }
  });

  it.each(LEAVES)('%s: subject, SANs, key usage, EKU, CA:FALSE and key match as openssl reads them', (n) => {
    const want = EXPECTED[n]!;
    const subject = openssl('x509', '-noout', '-subject', '-nameopt', 'sep_comma_plus_space,sname', '-in', file(n, 'crt')).trim();
    expect(subject).toBe(`subject=${want.subject}`);
    const text = opensslText(file(n, 'crt'));
    if (want.sans) expect(text).toContain(`X509v3 Subject Alternative Name: \n                ${want.sans}\n`);
    else expect(text).not.toContain('Subject Alternative Name');
    expect(text).toMatch(new RegExp(`Extended Key Usage: \\n\\s+${want.eku}\\n`));
    expect(text).toMatch(/Key Usage: critical\s+Digital Signature, Key Encipherment\n/);
    expect(text).toMatch(/Basic Constraints: critical\s+CA:FALSE/);
    expect(text).toMatch(/Subject Key Identifier:/);
    expect(text).toMatch(/Authority Key Identifier:/);
    expect(text).toMatch(/Signature Algorithm: ecdsa-with-SHA256/);
    expect(opensslKeyMatches(file(n, 'crt'), file(n, 'key'))).toBe(true);
  });

  it('validity is certValidityDays (3653) from now', () => {
    const end = openssl('x509', '-noout', '-enddate', '-in', pki('admin.crt')).trim().replace('notAfter=', '');
    const days = (new Date(end).getTime() - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(3652.9);
    expect(days).toBeLessThanOrEqual(3653);
  });
});

describe('up makes pki/ with a progress line before each group of files', () => {
  it('pki: checking ... before the certificates, the kubeconfigs and the encryption config; their lines after each', async () => {
    const project = makeProject({ cluster: 'keyAlgorithm: ecdsa-p256\n' });
    let text = '';
    const out = new Writable({ write(c, _e, done) { text += String(c); done(); } });
    await preparePki(loadInventory(project.machines), out);
    const lines = text.trimEnd().split('\n');
    const at = (l: string) => lines.indexOf(l);
    expect(at('pki: checking the CAs and certificates (a new key takes a moment)...')).toBe(0);
    expect(lines[1]).toBe('pki: issued ca (new)');
    expect(at('pki: checking the kubeconfigs...')).toBeGreaterThan(1);
    expect(at('pki: checking the encryption config...')).toBeGreaterThan(at('pki: checking the kubeconfigs...'));
    expect(lines.at(-1)).toBe('pki: 0 file(s) already up to date');
  });
});
