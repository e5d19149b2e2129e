// `hardway certs check`: passes on a fresh set, fails with a named problem for each kind of damage.
import { chmodSync, copyFileSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { caRotationCommand, checkCertificates, type CheckReport } from '../../src/certs/check.ts';
import { loadInventory } from '../../src/inventory.ts';
import { certifiedProject, EXAMPLE_MACHINES, hardway, issuedAt, snapshot } from './certs.helpers.ts';

const freshProject = (cluster?: string) => certifiedProject({ ...(cluster ? { cluster } : {}) });

async function checkJson(project: { dir: string; machines: string }): Promise<{ code: number; report: CheckReport }> {
  const run = await hardway(project, 'certs', 'check', '--json');
  return { code: run.code, report: JSON.parse(run.stdout) as CheckReport };
}

const problemsOf = (report: CheckReport, name: string) => report.certificates.find((c) => c.name === name)!.problems;

describe('hardway certs check', () => {
  it('passes on a fresh set: table with every certificate ok, exit 0, nothing changed', async () => {
    const p = await freshProject();
    const before = snapshot(p.dir);
    const run = await hardway(p, 'certs', 'check');
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^admin\s+ok\s+\d{4}-\d\d-\d\d \(365[23] days\)$/m);
    expect(run.stdout).toContain('all 12 certificates ok');
    expect(snapshot(p.dir)).toEqual(before);
  });

  it('--json prints exactly one JSON object with every certificate', async () => {
    const p = await freshProject();
    const run = await hardway(p, 'certs', 'check', '--json');
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout) as CheckReport;
    expect(report.ok).toBe(true);
    expect(report.certificates.map((c) => c.name)).toEqual(['ca', 'etcd-ca', 'admin', 'node-0/kubelet', 'node-1/kubelet', 'kube-proxy',
      'kube-controller-manager', 'kube-scheduler', 'kube-api-server', 'service-accounts', 'server/etcd-server', 'etcd-client']);
    for (const c of report.certificates) {
      expect(c).toMatchObject({ ok: true, problems: [], warnings: [] });
      expect(c.daysLeft).toBeGreaterThanOrEqual(3652);
      expect(new Date(c.notAfter!).getTime()).toBeGreaterThan(Date.now());
    }
  });

  it('a tampered certificate (another one copied over it) fails with named problems', async () => {
    const p = await freshProject();
    copyFileSync(join(p.dir, 'pki/kube-proxy.crt'), join(p.dir, 'pki/admin.crt'));
    const { code, report } = await checkJson(p);
    expect(code).toBe(1);
    expect(report.ok).toBe(false);
    expect(problemsOf(report, 'admin')).toEqual(expect.arrayContaining([
      'subject changed: CN=system:kube-proxy, O=system:node-proxier -> CN=admin, O=system:masters',
      'key does not match certificate',
    ]));
    expect(problemsOf(report, 'kube-proxy')).toEqual([]);
  });

  it('a certificate whose signed bytes were altered fails: its signature no longer verifies', async () => {
    const p = await freshProject();
    const file = join(p.dir, 'pki/kube-api-server.crt');
    const der = Buffer.from(readFileSync(file, 'utf8').replace(/-----[^-]+-----|\s/g, ''), 'base64');
    const at = der.indexOf(Buffer.from('kubernetes.default'));
    der[at] = 'K'.charCodeAt(0); // one SAN letter changed: a forged name
    writeFileSync(file, `-----BEGIN CERTIFICATE-----\n${der.toString('base64')}\n-----END CERTIFICATE-----\n`);
    const { code, report } = await checkJson(p);
    expect(code).toBe(1);
    expect(problemsOf(report, 'kube-api-server')).toEqual(expect.arrayContaining([
      "signature does not verify with its CA's key (altered?)",
      'SANs changed: +DNS:kubernetes.default -DNS:Kubernetes.default',
    ]));
  });

  it('a certificate from another CA (same CN=CA) fails as signed by a different CA', async () => {
    const p = await freshProject();
    const other = await freshProject();
    copyFileSync(join(other.dir, 'pki/machines/node-0/kubelet.crt'), join(p.dir, 'pki/machines/node-0/kubelet.crt'));
    const { code, report } = await checkJson(p);
    expect(code).toBe(1);
    expect(problemsOf(report, 'node-0/kubelet')).toContain('signed by a different CA');
  });

  it('a certificate or CA not valid yet (notBefore in the future) fails, saying from when', async () => {
    const p = await freshProject();
    issuedAt(p.dir, 'admin', new Date(Date.now() + 2 * 3_600_000));
    issuedAt(p.dir, 'etcd-ca', new Date(Date.now() + 5 * 86_400_000));
    const { code, report } = await checkJson(p);
    expect(code).toBe(1);
    expect(problemsOf(report, 'admin')).toEqual([expect.stringMatching(/^not valid yet: valid from \S+Z \(in 11[45] minutes\)$/)]);
    expect(problemsOf(report, 'etcd-ca')).toEqual([expect.stringMatching(/^not valid yet: valid from \S+Z \(in [45] days\)$/)]);
    // Its leaves were signed by the key it still has: only the CA itself is named.
    expect(problemsOf(report, 'etcd-client')).toEqual([]);
  });

  it('a wrong key fails as "key does not match certificate"', async () => {
    const p = await freshProject();
    copyFileSync(join(p.dir, 'pki/etcd-client.key'), join(p.dir, 'pki/kube-scheduler.key'));
    const run = await hardway(p, 'certs', 'check');
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/^kube-scheduler\s+FAIL.*\n\s+- key does not match certificate$/m);
  });

  it('a changed inventory fails on the certificates it affects, naming the SAN difference', async () => {
    const p = await freshProject();
    writeFileSync(p.machines, EXAMPLE_MACHINES.replace('10.240.0.10 ', '10.240.0.11 '));
    const { code, report } = await checkJson(p);
    expect(code).toBe(1);
    expect(problemsOf(report, 'kube-api-server')).toEqual(['SANs changed: +IP:10.240.0.11 -IP:10.240.0.10']);
    expect(problemsOf(report, 'server/etcd-server')).toEqual(['SANs changed: +IP:10.240.0.11 -IP:10.240.0.10']);
    expect(problemsOf(report, 'node-0/kubelet')).toEqual([]);
  });

  it('a missing certificate, a missing CA and a too-open key are each named', async () => {
    const p = await freshProject();
    rmSync(join(p.dir, 'pki/machines/node-1/kubelet.crt'));
    rmSync(join(p.dir, 'pki/etcd-ca.crt'));
    chmodSync(join(p.dir, 'pki/admin.key'), 0o640);
    const { code, report } = await checkJson(p);
    expect(code).toBe(1);
    expect(problemsOf(report, 'node-1/kubelet')).toEqual(['certificate missing']);
    expect(problemsOf(report, 'etcd-ca')).toEqual(['certificate missing']);
    expect(problemsOf(report, 'etcd-client')).toEqual(['cannot verify the chain: etcd-ca is missing or unreadable']);
    expect(problemsOf(report, 'admin')).toEqual(['key file pki/admin.key is mode 0640, must be 0600']);
  });

  it('fewer days left than renewBeforeDays is a warning naming the fix (exit 0); an expired certificate is a problem', async () => {
    const p = await freshProject('keyAlgorithm: ecdsa-p256\ncertValidityDays: 20\nrenewBeforeDays: 10\n');
    const { code, report } = await checkJson(p);
    expect(code).toBe(0);
    // 19 days left, outside a 10-day window: no warning.
    expect(report.certificates.find((c) => c.name === 'admin')!.warnings).toEqual([]);
    const inv = loadInventory(p.machines);
    const soon = checkCertificates(inv, new Date(Date.now() + 11 * 86_400_000));
    expect(soon.ok).toBe(true);
    expect(soon.certificates.find((c) => c.name === 'node-0/kubelet')!.warnings)
      .toEqual(['expires in 8 days (renewBeforeDays: 10); renew it: hardway certs --renew node-0/kubelet && hardway distribute']);
    expect(soon.certificates.find((c) => c.name === 'ca')!.warnings).toEqual([`expires in 8 days (renewBeforeDays: 10); renew it: ${caRotationCommand()}`]);
    // The default window is 30 days: the same certificates warn at once.
    writeFileSync(join(p.dir, 'cluster.yaml'), 'keyAlgorithm: ecdsa-p256\ncertValidityDays: 40\n');
    const wide = checkCertificates(loadInventory(p.machines), new Date());
    expect(wide.certificates.find((c) => c.name === 'admin')!.warnings).toEqual(['expires in 19 days (renewBeforeDays: 30); renew it: hardway certs --renew admin && hardway distribute']);
    const run = await hardway(p, 'certs', 'check');
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^admin\s+warn\s+.*\n\s+! expires in 19 days \(renewBeforeDays: 30\); renew it: hardway certs --renew admin && hardway distribute$/m);
    // The same set seen 30 days later (the check takes its clock as an argument).
    const later = checkCertificates(loadInventory(p.machines), new Date(Date.now() + 30 * 86_400_000));
    expect(later.ok).toBe(false);
    // notAfter was 10 days and a few milliseconds before: whole days, counted towards zero.
    expect(later.certificates.find((c) => c.name === 'admin')!.problems).toEqual(['expired 10 days ago; renew it: hardway certs --renew admin && hardway distribute']);
  });
});
