// The real default path, end to end through the commands: no cluster.yaml, so RSA-4096 keys,
// then kubeconfigs and the checks, all judged by openssl and kubectl.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { hardway, makeProject, opensslKeyMatches, opensslText, opensslVerifies, pkiName } from './certs.helpers.ts';

const LEAVES = ['admin', 'node-0/kubelet', 'node-1/kubelet', 'kube-proxy', 'kube-controller-manager', 'kube-scheduler',
  'kube-api-server', 'service-accounts', 'server/etcd-server', 'etcd-client'];

describe('default settings: RSA-4096 end to end', () => {
  const project = makeProject();
  const pki = (f: string) => join(project.dir, 'pki', f);
  const file = (n: string, ext: string) => pki(`${pkiName(n)}.${ext}`);
  beforeAll(async () => {
    const run = await hardway(project, 'certs');
    expect(run.code).toBe(0);
  }, 120_000);

  it('every key is RSA 4096 and every signature sha256WithRSAEncryption; openssl verifies each chain', () => {
    for (const n of ['ca', 'etcd-ca', ...LEAVES]) {
      const text = opensslText(file(n, 'crt'));
      expect(text, n).toMatch(/Public-Key: \(4096 bit\)/);
      expect(text, n).toMatch(/Signature Algorithm: sha256WithRSAEncryption/);
      expect(opensslKeyMatches(file(n, 'crt'), file(n, 'key')), n).toBe(true);
    }
    for (const n of LEAVES) expect(opensslVerifies(pki(n.includes('etcd-') ? 'etcd-ca.crt' : 'ca.crt'), file(n, 'crt')), n).toBe(true);
  });

  it('certs check passes, and kubeconfigs build on these certificates for kubectl', async () => {
    const check = await hardway(project, 'certs', 'check');
    expect(check.code).toBe(0);
    expect(check.stdout).toContain('all 12 certificates ok');
    const kc = await hardway(project, 'kubeconfigs');
    expect(kc.code).toBe(0);
    const view = JSON.parse(execFileSync('/usr/bin/kubectl', ['config', 'view', '--raw', '--kubeconfig', pki('jumpbox.kubeconfig'), '-o', 'json'], { encoding: 'utf8' }));
    expect(view.clusters[0].cluster.server).toBe('https://server.kubernetes.local:6443');
    expect(Buffer.from(view.users[0].user['client-key-data'], 'base64').toString()).toContain('BEGIN PRIVATE KEY');
  });
});
