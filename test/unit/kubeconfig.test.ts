// `hardway kubeconfigs`: every kubeconfig readable by the real kubectl, embedded and exact, kept
// byte for byte on rerun, and refused when the certificates are not there.
import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { chmodSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { EXAMPLE_MACHINES, hardway, makeProject, named, snapshot } from './certs.helpers.ts';

const FILES = ['machines/node-0/kubelet', 'machines/node-1/kubelet', 'kube-proxy', 'kube-controller-manager', 'kube-scheduler', 'admin', 'jumpbox'];
/** kubeconfig -> [user, server, certificate it embeds] */
const WANT: Record<string, [string, string, string]> = {
  'machines/node-0/kubelet': ['system:node:node-0', 'https://server.kubernetes.local:6443', 'machines/node-0/kubelet'],
  'machines/node-1/kubelet': ['system:node:node-1', 'https://server.kubernetes.local:6443', 'machines/node-1/kubelet'],
  'kube-proxy': ['system:kube-proxy', 'https://server.kubernetes.local:6443', 'kube-proxy'],
  'kube-controller-manager': ['system:kube-controller-manager', 'https://server.kubernetes.local:6443', 'kube-controller-manager'],
  'kube-scheduler': ['system:kube-scheduler', 'https://server.kubernetes.local:6443', 'kube-scheduler'],
  admin: ['admin', 'https://127.0.0.1:6443', 'admin'],
  jumpbox: ['admin', 'https://server.kubernetes.local:6443', 'admin'],
};

function kubectlView(file: string) {
  return JSON.parse(execFileSync('/usr/bin/kubectl', ['config', 'view', '--raw', '--kubeconfig', file, '-o', 'json'], { encoding: 'utf8' }));
}

async function certifiedProject() {
  const p = makeProject({ cluster: 'keyAlgorithm: ecdsa-p256\n' });
  expect((await hardway(p, 'certs')).code).toBe(0);
  return p;
}

describe('hardway kubeconfigs', () => {
  let p: { dir: string; machines: string };
  let first: Awaited<ReturnType<typeof hardway>>;
  beforeAll(async () => {
    p = await certifiedProject();
    first = await hardway(p, 'kubeconfigs');
  });

  it('writes one kubeconfig per worker, component, admin and jumpbox, mode 0600, no secrets printed', () => {
    expect(first.code).toBe(0);
    expect(first.stdout.trim().split('\n')).toEqual(FILES.map((f) => `written pki/${f}.kubeconfig`));
    for (const f of FILES) expect(statSync(join(p.dir, `pki/${f}.kubeconfig`)).mode & 0o777).toBe(0o600);
    expect(first.stdout + first.stderr).not.toMatch(/BEGIN|LS0t/);
  });

  it.each(FILES)('%s.kubeconfig: kubectl sees the right cluster, server, user, context and embedded data', (f) => {
    const [user, server, identity] = WANT[f]!;
    const view = kubectlView(join(p.dir, `pki/${f}.kubeconfig`));
    expect(view['current-context']).toBe('default');
    expect(view.contexts).toEqual([{ name: 'default', context: { cluster: 'kubernetes-the-hard-way', user } }]);
    expect(view.clusters).toHaveLength(1);
    expect(view.clusters[0].name).toBe('kubernetes-the-hard-way');
    expect(view.clusters[0].cluster.server).toBe(server);
    const data = (k: string) => Buffer.from(k, 'base64').toString('utf8');
    expect(data(view.clusters[0].cluster['certificate-authority-data'])).toBe(readFileSync(join(p.dir, 'pki/ca.crt'), 'utf8'));
    expect(view.users).toHaveLength(1);
    expect(view.users[0].name).toBe(user);
    expect(data(view.users[0].user['client-certificate-data'])).toBe(readFileSync(join(p.dir, `pki/${identity}.crt`), 'utf8'));
    expect(data(view.users[0].user['client-key-data'])).toBe(readFileSync(join(p.dir, `pki/${identity}.key`), 'utf8'));
    // The embedded certificate's subject is the user kubectl will present.
    expect(new X509Certificate(data(view.users[0].user['client-certificate-data'])).subject).toContain(user === 'admin' ? 'CN=admin' : `CN=${user}`);
  });

  it('a rerun keeps every file byte for byte', async () => {
    const before = snapshot(p.dir);
    const run = await hardway(p, 'kubeconfigs');
    expect(run.code).toBe(0);
    expect(named(run, 'kept')).toEqual(FILES.map((f) => `pki/${f}.kubeconfig`));
    expect(snapshot(p.dir)).toEqual(before);
  });
});

describe('hardway kubeconfigs after a change', () => {
  it("rewrites only the kubeconfig whose certificate was reissued", async () => {
    const p = await certifiedProject();
    expect((await hardway(p, 'kubeconfigs')).code).toBe(0);
    writeFileSync(p.machines, EXAMPLE_MACHINES.replace('10.240.0.21 ', '10.240.0.99 '));
    expect((await hardway(p, 'certs')).code).toBe(0);
    const run = await hardway(p, 'kubeconfigs');
    expect(named(run, 'written')).toEqual(['pki/machines/node-1/kubelet.kubeconfig']);
  });

  it('a kubeconfig left too open is narrowed to 0600 and the run says so', async () => {
    const p = await certifiedProject();
    await hardway(p, 'kubeconfigs');
    chmodSync(join(p.dir, 'pki/admin.kubeconfig'), 0o644);
    const run = await hardway(p, 'kubeconfigs');
    expect(run.stdout).toContain('fixed mode of pki/admin.kubeconfig (was 0644, now 0600)');
    expect(statSync(join(p.dir, 'pki/admin.kubeconfig')).mode & 0o777).toBe(0o600);
  });

  it('without certificates: exit 1 with the hint "run hardway certs", nothing written', async () => {
    const p = makeProject();
    const run = await hardway(p, 'kubeconfigs');
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^error: the kubeconfigs embed the certificates, and pki\/ has none yet\n/);
    expect(run.stderr).toContain('hint: run hardway certs');
    expect(run.stdout).toBe('');
  });

  it('with a certificate that no longer matches the inventory: exit 1, nothing written', async () => {
    const p = await certifiedProject();
    rmSync(join(p.dir, 'pki/kube-proxy.crt'));
    writeFileSync(p.machines, EXAMPLE_MACHINES.replace('10.240.0.20 ', '10.240.0.98 '));
    const before = snapshot(p.dir);
    const run = await hardway(p, 'kubeconfigs');
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('node-0/kubelet (SANs changed: +IP:10.240.0.98 -IP:10.240.0.20)');
    expect(run.stderr).toContain('kube-proxy (certificate missing)');
    expect(snapshot(p.dir)).toEqual(before);
  });
});
