// Issue 24, items 6, 9, 10, 15 and the pki/ mode of 16: a certificate whose key-algorithm field is
// malformed is that file being unreadable (never a crash), an expired CA stops certs with how to
// rotate it, days are counted towards zero, --renew NAME means one thing, kubeconfigs need the CA
// certificate only, and certs check names a pki/ that others can read.
import { chmodSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkCertificates } from '../../src/certs/check.ts';
import { loadInventory } from '../../src/inventory.ts';
import { certifiedProject, hardway, issuedAt, named, snapshot } from './certs.helpers.ts';
import { breakKeyAlgorithm, failedCleanly } from './safety.helpers.ts';

const DAY = 86_400_000;

const issued = () => certifiedProject();

describe('a certificate with a malformed key-algorithm field (item 6)', () => {
  it('a leaf: certs check reports it unreadable (exit 1, one JSON object), kubeconfigs names it, certs reissues it', async () => {
    const p = await issued();
    breakKeyAlgorithm(join(p.dir, 'pki/admin.crt'));
    const check = await hardway(p, 'certs', 'check', '--json');
    expect(check.code, check.stderr).toBe(1);
    const report = JSON.parse(check.stdout);
    expect(report.certificates.find((c: { name: string }) => c.name === 'admin').problems[0]).toMatch(/^certificate unreadable/);
    failedCleanly(await hardway(p, 'kubeconfigs'), 1, /admin \(certificate unreadable/);
    const certs = await hardway(p, 'certs');
    expect(certs.code, certs.stderr).toBe(0);
    expect(certs.stdout).toMatch(/^reissued admin \(certificate unreadable/m);
    expect((await hardway(p, 'certs', 'check')).code).toBe(0);
  });

  it('the CA: certs says pki/ca.crt is unreadable (not that ca.key does not match), changes nothing; check and kubeconfigs name it', async () => {
    const p = await issued();
    breakKeyAlgorithm(join(p.dir, 'pki/ca.crt'));
    const before = snapshot(p.dir);
    const certs = await hardway(p, 'certs');
    failedCleanly(certs, 1, 'pki/ca.crt is not a readable certificate');
    expect(certs.stderr.split('\n')[0]).not.toContain('ca.key');
    expect(certs.stderr).toContain('hint: restore it from your backup');
    const check = await hardway(p, 'certs', 'check', '--json');
    expect(check.code).toBe(1);
    expect(JSON.parse(check.stdout).certificates[0]).toMatchObject({ name: 'ca', ok: false, problems: [expect.stringMatching(/^certificate unreadable/)] });
    failedCleanly(await hardway(p, 'kubeconfigs'), 1, /ca \(certificate unreadable\)/);
    expect(snapshot(p.dir)).toEqual(before);
  });
});

describe('an expired CA (item 9)', () => {
  it('certs fails (exit 1) saying how to rotate it, and keeps nothing silently; --renew-ca can start from it', async () => {
    const p = await issued();
    issuedAt(p.dir, 'ca', new Date(Date.now() - 400 * DAY));
    const before = snapshot(p.dir);
    const run = await hardway(p, 'certs');
    failedCleanly(run, 1, /^error: pki\/ca\.crt expired 35 days ago \(notAfter \S+\): no TLS peer accepts a certificate it signed any more; nothing was changed$/);
    expect(run.stderr).toContain('hardway certs --renew-ca');
    expect(snapshot(p.dir)).toEqual(before);
    const check = await hardway(p, 'certs', 'check');
    expect(check.code).toBe(1);
    expect(check.stdout).toMatch(/^ca\s+FAIL .*\n\s+- expired 35 days ago; renew it: hardway certs --renew-ca/m);
    const start = await hardway(p, 'certs', '--renew-ca', '--yes');
    expect(start.code, start.stderr).toBe(0);
    expect(start.stdout).toContain('CA rotation 1/3 (start)');
  });

  it('days are whole days counted towards zero: 36 hours after notAfter is 1 day ago (not 2)', async () => {
    const p = await issued();
    const inv = loadInventory(p.machines);
    const notAfter = new Date(checkCertificates(inv, new Date()).certificates.find((c) => c.name === 'admin')!.notAfter!);
    const later = checkCertificates(inv, new Date(notAfter.getTime() + 36 * 3_600_000));
    const admin = later.certificates.find((c) => c.name === 'admin')!;
    expect(admin.problems).toEqual(['expired 1 day ago; renew it: hardway certs --renew admin && hardway distribute']);
    expect(admin.daysLeft).toBe(-1);
  });
});

describe('certs --renew NAME means one thing (item 10)', () => {
  it('with a machine named admin: admin is the certificate, admin/kubelet the machine\'s own', async () => {
    const p = await certifiedProject({ machines: '10.240.0.10 server.kubernetes.local server\n10.240.0.20 admin.kubernetes.local admin 10.200.0.0/24\n' });
    const cert = await hardway(p, 'certs', '--renew', 'admin');
    expect(cert.code, cert.stderr).toBe(0);
    expect(named(cert, 'reissued')).toEqual(['admin']);
    const own = await hardway(p, 'certs', '--renew', 'admin/kubelet');
    expect(named(own, 'reissued')).toEqual(['admin/kubelet']);
    const machine = await hardway(p, 'certs', '--renew', 'server');
    expect(named(machine, 'reissued')).toEqual(['server/etcd-server']);
  });
});

describe('kubeconfigs need the CA certificate only (item 15)', () => {
  it('with pki/ca.key kept offline (moved away), kubeconfigs writes every kubeconfig', async () => {
    const p = await issued();
    renameSync(join(p.dir, 'pki/ca.key'), join(p.dir, 'ca.key.offline'));
    const run = await hardway(p, 'kubeconfigs');
    expect(run.code, run.stderr).toBe(0);
    expect(named(run, 'written')).toContain('pki/jumpbox.kubeconfig');
    renameSync(join(p.dir, 'pki/ca.crt'), join(p.dir, 'ca.crt.away'));
    failedCleanly(await hardway(p, 'kubeconfigs'), 1, /ca \(certificate missing\)/);
  });
});

describe('certs check and pki/ itself (item 16)', () => {
  it('a pki/ of mode 0755 is a problem (exit 1, in the JSON too); certs narrows it', async () => {
    const p = await issued();
    chmodSync(join(p.dir, 'pki'), 0o755);
    const check = await hardway(p, 'certs', 'check', '--json');
    expect(check.code).toBe(1);
    expect(JSON.parse(check.stdout).problems).toEqual([expect.stringMatching(/^pki\/ is mode 0755, must be 0700/)]);
    const text = await hardway(p, 'certs', 'check');
    expect(text.stdout).toContain('FAIL: pki/ is mode 0755, must be 0700');
    expect((await hardway(p, 'certs')).stdout).toContain('fixed mode of pki/ (was 0755, now 0700)');
    expect((await hardway(p, 'certs', 'check')).code).toBe(0);
  });
});
