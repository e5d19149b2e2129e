// Machine names can never reach another identity's files: a worker called ca, etcd-ca, admin,
// kube-api-server, jumpbox, ... gets its own certificate, key and kubeconfig in
// pki/machines/<hostname>/, the CAs stay byte for byte, and a rerun changes nothing. pki/ from
// before that layout is moved into it without reissuing anything.
import { X509Certificate } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { assertDistinctFiles, identitiesFor } from '../../src/certs/identities.ts';
import { kubeconfigsFor } from '../../src/certs/kubeconfig.ts';
import { loadInventory } from '../../src/inventory.ts';
import { PKI } from '../../src/layout.ts';
import { placements } from '../../src/steps/support/placements.ts';
import { hardway, makeProject, named, snapshot } from './certs.helpers.ts';

const EC = 'keyAlgorithm: ecdsa-p256\n';
/** HOSTILE has two control planes (server, client) on purpose. */
const EC_TWO = `${EC}evenControlPlanes: true\n`;
/** Every cluster-wide name in pki/ today, each used as a worker's hostname. */
const TAKEN = ['ca', 'etcd-ca', 'admin', 'jumpbox', 'kube-proxy', 'kube-controller-manager', 'kube-scheduler', 'kube-api-server',
  'service-accounts', 'etcd-client', 'encryption-config'];
const HOSTILE = [
  '10.240.0.10 server.kubernetes.local server',
  ...TAKEN.map((n, i) => `10.240.0.${20 + i} ${n}.kubernetes.local ${n} 10.200.${i}.0/24`),
  // A control plane whose etcd member file was once pki/etcd-server-<hostname>: "client" made it etcd-server-client.
  '10.240.0.11 client.kubernetes.local client',
  '',
].join('\n');

const subjectOf = (file: string) => new X509Certificate(readFileSync(file)).subject.split('\n').join(', ');
const kubeconfigUser = (file: string) => /client-certificate-data: (\S+)/.exec(readFileSync(file, 'utf8'))![1]!;

describe('machine names never share a file with another identity', () => {
  it('workers named like every cluster-wide file: CAs untouched, each identity its own, a rerun keeps all', async () => {
    const p = makeProject({ machines: HOSTILE, cluster: EC_TWO });
    const first = await hardway(p, 'certs');
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).not.toMatch(/^reissued /m);
    const pki = (f: string) => join(p.dir, 'pki', f);
    expect(subjectOf(pki('ca.crt'))).toBe('CN=CA');
    expect(subjectOf(pki('etcd-ca.crt'))).toBe('CN=etcd-ca');
    expect(subjectOf(pki('admin.crt'))).toBe('CN=admin, O=system:masters');
    expect(subjectOf(pki('kube-api-server.crt'))).toBe('CN=kubernetes');
    for (const n of TAKEN) expect(subjectOf(pki(`machines/${n}/kubelet.crt`))).toBe(`CN=system:node:${n}, O=system:nodes`);
    expect(subjectOf(pki('machines/client/etcd-server.crt'))).toBe('CN=client');
    expect(subjectOf(pki('etcd-client.crt'))).toBe('CN=kube-apiserver-etcd-client');

    expect((await hardway(p, 'kubeconfigs')).code).toBe(0);
    expect((await hardway(p, 'encryption-config')).code).toBe(0);
    const before = snapshot(p.dir);
    const again = await hardway(p, 'certs');
    expect(again.code).toBe(0);
    expect(named(again, 'issued')).toEqual([]);
    expect(named(again, 'reissued')).toEqual([]);
    expect(snapshot(p.dir)).toEqual(before);
    expect(named(await hardway(p, 'kubeconfigs'), 'written')).toEqual([]);

    // The user's jumpbox kubeconfig stays admin; the worker "jumpbox" gets its own node identity.
    const jumpboxUser = new X509Certificate(Buffer.from(kubeconfigUser(pki('jumpbox.kubeconfig')), 'base64')).subject;
    expect(jumpboxUser).toContain('CN=admin');
    const kubelet = new X509Certificate(Buffer.from(kubeconfigUser(pki('machines/jumpbox/kubelet.kubeconfig')), 'base64')).subject;
    expect(kubelet).toContain('CN=system:node:jumpbox');
    const inv = loadInventory(p.machines);
    const worker = inv.machines.find((m) => m.hostname === 'jumpbox')!;
    const kubeletKubeconfig = placements(inv, worker).find((pl) => pl.to === '/var/lib/kubelet/kubeconfig')!;
    expect(kubeletKubeconfig.from).toBe('pki/machines/jumpbox/kubelet.kubeconfig');
    // Nothing a worker "ca" gets is the CA key.
    const ca = inv.machines.find((m) => m.hostname === 'ca')!;
    expect(placements(inv, ca).map((pl) => pl.from)).not.toContain(PKI.ca.key);
  }, 60_000);

  it('every file of pki/ has exactly one owner for any inventory; a clash is a bug caught before writing', () => {
    const inv = loadInventory(makeProject({ machines: HOSTILE, cluster: EC_TWO }).machines);
    expect(() => assertDistinctFiles(identitiesFor(inv), kubeconfigsFor(inv))).not.toThrow();
    const clash = [{ name: 'node-x', files: { crt: PKI.ca.crt, key: 'pki/node-x.key' } }];
    expect(() => assertDistinctFiles(clash)).toThrow('pki/ca.crt would belong to both CA ca and certificate node-x');
  });

  it('a leaf in the CA\'s place (what a worker named "ca" left before) is refused, not used to sign', async () => {
    const p = makeProject({ cluster: EC });
    expect((await hardway(p, 'certs')).code).toBe(0);
    const pki = (f: string) => join(p.dir, 'pki', f);
    renameSync(pki('admin.crt'), pki('ca.crt'));
    renameSync(pki('admin.key'), pki('ca.key'));
    const before = snapshot(p.dir);
    const run = await hardway(p, 'certs');
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('error: pki/ca.crt is not a CA certificate (it says CN=admin, O=system:masters, CA:FALSE); nothing was changed');
    expect(run.stderr).toContain('hint: restore it from your backup');
    expect(snapshot(p.dir)).toEqual(before);
  });
});

describe('pki/ of the earlier layout', () => {
  /** Puts each machine's files back where versions before pki/machines/ kept them. */
  function toOldLayout(dir: string, workers: string[], servers: string[]) {
    const pki = (f: string) => join(dir, 'pki', f);
    for (const w of workers) for (const ext of ['crt', 'key', 'kubeconfig']) renameSync(pki(`machines/${w}/kubelet.${ext}`), pki(`${w}.${ext}`));
    for (const s of servers) for (const ext of ['crt', 'key']) renameSync(pki(`machines/${s}/etcd-server.${ext}`), pki(`etcd-server-${s}.${ext}`));
    rmSync(pki('machines'), { recursive: true });
  }

  it('is moved into pki/machines/ byte for byte: nothing reissued, kubeconfigs kept', async () => {
    const p = makeProject({ cluster: EC });
    expect((await hardway(p, 'certs')).code).toBe(0);
    expect((await hardway(p, 'kubeconfigs')).code).toBe(0);
    const want = snapshot(p.dir);
    toOldLayout(p.dir, ['node-0', 'node-1'], ['server']);
    const run = await hardway(p, 'certs');
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('moved pki/node-0.crt, pki/node-0.key, pki/node-0.kubeconfig into pki/machines/node-0/ (where this version keeps node-0/kubelet)\n');
    expect(run.stdout).toContain('moved pki/etcd-server-server.crt, pki/etcd-server-server.key into pki/machines/server/ (where this version keeps server/etcd-server)\n');
    expect(named(run, 'issued')).toEqual([]);
    expect(named(run, 'reissued')).toEqual([]);
    expect(run.stdout).not.toContain('unused');
    expect(snapshot(p.dir)).toEqual(want);
    expect(named(await hardway(p, 'kubeconfigs'), 'written')).toEqual([]);
  });

  it('a file that belongs to a cluster-wide identity is never moved, even for a machine of that name', async () => {
    const p = makeProject({ cluster: EC });
    expect((await hardway(p, 'certs')).code).toBe(0);
    // A worker "admin" of the old layout shared pki/admin.crt with the admin identity.
    const adminCrt = readFileSync(join(p.dir, 'pki/admin.crt'));
    const grown = makeProject({ machines: HOSTILE, cluster: EC_TWO });
    mkdirSync(join(grown.dir, 'pki'), { mode: 0o700 });
    for (const f of ['ca.crt', 'ca.key', 'etcd-ca.crt', 'etcd-ca.key', 'admin.crt', 'admin.key']) renameSync(join(p.dir, 'pki', f), join(grown.dir, 'pki', f));
    const run = await hardway(grown, 'certs');
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).not.toMatch(/^moved /m);
    expect(run.stdout).toMatch(/^kept admin$/m);
    expect(run.stdout).toMatch(/^issued admin\/kubelet \(new\)$/m);
    expect(readFileSync(join(grown.dir, 'pki/admin.crt'))).toEqual(adminCrt);
    expect(existsSync(join(grown.dir, 'pki/machines/admin/kubelet.crt'))).toBe(true);
  }, 60_000);
});
