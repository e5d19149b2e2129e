// `hardway certs` run again: keeps what still matches, reissues exactly what changed, never
// replaces a CA, and refuses to work with a broken CA.
import { chmodSync, copyFileSync, existsSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { X509Certificate } from 'node:crypto';
import { ensureCertificates } from '../../src/certs/ensure.ts';
import { loadInventory } from '../../src/inventory.ts';
import { certifiedProject, EXAMPLE_MACHINES, hardway, issuedAt, makeProject, named, opensslVerifies, snapshot } from './certs.helpers.ts';

const ALL = ['ca', 'etcd-ca', 'admin', 'node-0/kubelet', 'node-1/kubelet', 'kube-proxy', 'kube-controller-manager', 'kube-scheduler',
  'kube-api-server', 'service-accounts', 'server/etcd-server', 'etcd-client'];
const EC = 'keyAlgorithm: ecdsa-p256\n';

const freshProject = (cluster = EC) => certifiedProject({ cluster });

describe('hardway certs, run again', () => {
  it('a second run keeps everything and every file stays byte-identical', async () => {
    const p = await freshProject();
    const before = snapshot(p.dir);
    const run = await hardway(p, 'certs');
    expect(run.code).toBe(0);
    expect(named(run, 'kept')).toEqual(ALL);
    expect(run.stdout.trim().split('\n')).toHaveLength(ALL.length);
    expect(snapshot(p.dir)).toEqual(before);
  });

  it('clears the temp files a killed write left in pki/ and pki/machines/<host>/, and nothing else', async () => {
    const p = await freshProject();
    const before = snapshot(p.dir);
    const left = [join(p.dir, 'pki', '.0123456789ab.tmp'), join(p.dir, 'pki', 'machines', 'node-0', '.abcdef012345.tmp')];
    for (const f of left) writeFileSync(f, 'half a key', { mode: 0o600 });
    const mine = join(p.dir, 'pki', '.notes.tmp');
    writeFileSync(mine, 'not hardway\'s');
    const run = await hardway(p, 'certs');
    expect(run.code).toBe(0);
    for (const f of left) expect(existsSync(f)).toBe(false);
    expect(readFileSync(mine, 'utf8')).toBe('not hardway\'s');
    rmSync(mine);
    expect(snapshot(p.dir)).toEqual(before);
  });

  it("a worker's new IP reissues only that worker's certificate (not the CA), naming the change", async () => {
    const p = await freshProject();
    const before = snapshot(p.dir);
    writeFileSync(p.machines, EXAMPLE_MACHINES.replace('10.240.0.21 ', '10.240.0.99 '));
    const run = await hardway(p, 'certs');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('reissued node-1/kubelet (SANs changed: +IP:10.240.0.99 -IP:10.240.0.21)\n');
    expect(named(run, 'kept')).toEqual(ALL.filter((n) => n !== 'node-1/kubelet'));
    const after = snapshot(p.dir);
    const changed = Object.keys(after).filter((f) => after[f]!.sha !== before[f]!.sha);
    expect(changed.sort()).toEqual(['machines/node-1/kubelet.crt', 'machines/node-1/kubelet.key']);
    expect(opensslVerifies(join(p.dir, 'pki/ca.crt'), join(p.dir, 'pki/machines/node-1/kubelet.crt'))).toBe(true);
  });

  it('a new worker gets one new certificate; the rest is kept', async () => {
    const p = await freshProject();
    writeFileSync(p.machines, EXAMPLE_MACHINES + '10.240.0.22 node-2.kubernetes.local node-2 10.200.2.0/24\n');
    const run = await hardway(p, 'certs');
    expect(run.code).toBe(0);
    expect(named(run, 'issued')).toEqual(['node-2/kubelet']);
    expect(run.stdout).toContain('issued node-2/kubelet (new)\n');
    expect(named(run, 'kept')).toEqual(ALL);
  });

  it('a removed worker is reported as unused and its files are left alone', async () => {
    const p = await freshProject();
    writeFileSync(p.machines, EXAMPLE_MACHINES.replace(/^10\.240\.0\.21 .*\n/m, ''));
    const run = await hardway(p, 'certs');
    expect(run.stdout).toContain('unused node-1/kubelet (not in the inventory any more; left in pki/)');
    expect(existsSync(join(p.dir, 'pki/machines/node-1/kubelet.key'))).toBe(true);
  });

  it('certificates that expire within renewBeforeDays are reissued; the CAs are kept (with a warning)', async () => {
    const p = await freshProject(`${EC}certValidityDays: 20\nrenewBeforeDays: 10\n`);
    const ca = readFileSync(join(p.dir, 'pki/ca.crt'));
    expect(named(await hardway(p, 'certs'), 'kept')).toEqual(ALL);
    // The same pki/ seen 11 days later (ensureCertificates takes its clock as an argument).
    const report = await ensureCertificates(loadInventory(p.machines), new Date(Date.now() + 11 * 86_400_000));
    const lines = report.lines.map((l) => l.text);
    expect(report.lines.filter((l) => l.kept).map((l) => l.text)).toEqual(['kept ca', 'kept etcd-ca']);
    expect(lines).toContain('reissued admin (expires in 8 days)');
    expect(lines.filter((l) => l.startsWith('reissued '))).toHaveLength(ALL.length - 2);
    expect(report.warnings[0]).toMatch(/^ca expires in 8 days; hardway never replaces a CA/);
    expect(readFileSync(join(p.dir, 'pki/ca.crt'))).toEqual(ca);
  });

  it('a changed key algorithm reissues every leaf with the new algorithm but never replaces the CA', async () => {
    const p = await freshProject();
    const before = snapshot(p.dir);
    writeFileSync(join(p.dir, 'cluster.yaml'), 'keyAlgorithm: rsa-2048\n');
    const run = await hardway(p, 'certs');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('reissued admin (key algorithm changed: ecdsa-p256 -> rsa-2048)\n');
    const after = snapshot(p.dir);
    for (const f of ['ca.crt', 'ca.key', 'etcd-ca.crt', 'etcd-ca.key']) expect(after[f]).toEqual(before[f]);
    expect(opensslVerifies(join(p.dir, 'pki/ca.crt'), join(p.dir, 'pki/admin.crt'))).toBe(true);
  });

  it('a certificate not valid yet (notBefore in the future) is reissued, naming when it would start', async () => {
    const p = await freshProject();
    issuedAt(p.dir, 'node-0/kubelet', new Date(Date.now() + 10 * 86_400_000));
    const run = await hardway(p, 'certs');
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^reissued node-0\/kubelet \(not valid yet: valid from \d{4}-\d\d-\d\dT[\d:.]+Z \(in (9|10) days\)\)$/m);
    expect(named(run, 'reissued')).toEqual(['node-0/kubelet']);
    expect(new Date(new X509Certificate(readFileSync(join(p.dir, 'pki/machines/node-0/kubelet.crt'))).validFrom).getTime()).toBeLessThan(Date.now());
    expect((await hardway(p, 'certs', 'check')).code).toBe(0);
  });

  it('a CA not valid yet is refused, never replaced: exit 1, the clock named, nothing changed', async () => {
    const p = await freshProject();
    issuedAt(p.dir, 'ca', new Date(Date.now() + 3 * 86_400_000));
    const before = snapshot(p.dir);
    const run = await hardway(p, 'certs');
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^error: pki\/ca\.crt is not valid yet: valid from \S+ \(in (2|3) days\); nothing was changed\n  hint: check this machine's clock \(it says \S+\); hardway never replaces a CA/);
    expect(snapshot(p.dir)).toEqual(before);
  });

  it('a key that does not match its certificate is reissued', async () => {
    const p = await freshProject();
    copyFileSync(join(p.dir, 'pki/kube-proxy.key'), join(p.dir, 'pki/admin.key'));
    const run = await hardway(p, 'certs');
    expect(run.stdout).toContain('reissued admin (key does not match certificate)\n');
    expect(named(run, 'reissued')).toEqual(['admin']);
  });

  it('a key file that is too open is narrowed to 0600, and the run says so', async () => {
    const p = await freshProject();
    chmodSync(join(p.dir, 'pki/machines/node-0/kubelet.key'), 0o644);
    const run = await hardway(p, 'certs');
    expect(run.stdout).toContain('fixed mode of pki/machines/node-0/kubelet.key (was 0644, now 0600)\n');
    expect(statSync(join(p.dir, 'pki/machines/node-0/kubelet.key')).mode & 0o777).toBe(0o600);
    expect(named(run, 'kept')).toEqual(ALL);
  });

  it('a leaf signed by another CA is reissued by ours', async () => {
    const p = await freshProject();
    const other = await freshProject();
    for (const f of ['admin.crt', 'admin.key']) copyFileSync(join(other.dir, 'pki', f), join(p.dir, 'pki', f));
    const run = await hardway(p, 'certs');
    expect(run.stdout).toContain('reissued admin (signed by a different CA)\n');
    expect(opensslVerifies(join(p.dir, 'pki/ca.crt'), join(p.dir, 'pki/admin.crt'))).toBe(true);
  });

  for (const [what, breakIt, message] of [
    ['missing', (d: string) => rmSync(join(d, 'pki/ca.key')), 'pki/ca.crt exists but pki/ca.key is missing'],
    ['not matching', (d: string) => copyFileSync(join(d, 'pki/etcd-ca.key'), join(d, 'pki/ca.key')), 'pki/ca.key does not match pki/ca.crt'],
    ['present without its certificate', (d: string) => rmSync(join(d, 'pki/etcd-ca.crt')), 'pki/etcd-ca.key exists but pki/etcd-ca.crt is missing'],
  ] as const) {
    it(`a CA key ${what}: exit 1, says so, changes nothing`, async () => {
      const p = await freshProject();
      breakIt(p.dir);
      writeFileSync(p.machines, EXAMPLE_MACHINES.replace('10.240.0.21 ', '10.240.0.99 ')); // work that would be done
      const before = snapshot(p.dir);
      const run = await hardway(p, 'certs');
      expect(run.code).toBe(1);
      expect(run.stderr).toContain(`error: ${message}; nothing was changed`);
      expect(run.stderr).toContain('hint: restore it from your backup');
      expect(run.stderr).not.toMatch(/\n\s+at /); // no stack trace
      expect(run.stdout).toBe('');
      expect(snapshot(p.dir)).toEqual(before);
    });
  }

  it('a bad inventory exits 2 and writes nothing', async () => {
    const p = makeProject({ machines: '10.240.0.10 server.kubernetes.local server\n10.240.0.300 node-0.kubernetes.local node-0 10.200.0.0/24\n' });
    const run = await hardway(p, 'certs');
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/machines\.txt:2: "10\.240\.0\.300" is not a valid IPv4 address/);
    expect(existsSync(join(p.dir, 'pki'))).toBe(false);
  });
});
