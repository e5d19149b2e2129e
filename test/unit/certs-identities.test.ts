// The identity list other code (distribute) builds on, and the pki/ reader.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { identitiesFor, readPkiFile, caIdentities } from '../../src/certs/identities.ts';
import { defaultSettings } from '../../src/cluster-settings.ts';
import { FailureError } from '../../src/errors.ts';
import { parseInventory } from '../../src/inventory.ts';
import { PKI } from '../../src/layout.ts';
import { hardway, makeProject } from './certs.helpers.ts';

const TWO_SERVERS = [
  '10.240.0.10 server.kubernetes.local server',
  '10.240.0.11 server-b.kubernetes.local server-b',
  '10.240.0.20 node-0.kubernetes.local node-0 10.200.0.0/24',
].join('\n');

function inventory(text: string, clusterDomain = 'cluster.local') {
  // Two control planes on purpose: each gets its own etcd member certificate.
  const settings = { ...defaultSettings(), clusterDomain, evenControlPlanes: true };
  return parseInventory(text, settings, { file: '/p/machines.txt', dir: '/p', clusterFile: '/p/cluster.yaml' });
}

describe('identitiesFor', () => {
  const ids = identitiesFor(inventory(TWO_SERVERS, 'example.internal'));
  const byName = (n: string) => ids.find((i) => i.name === n)!;

  it('lists every identity once, per worker and per control-plane machine, with its files from layout', () => {
    expect(ids.map((i) => i.name)).toEqual(['admin', 'node-0/kubelet', 'kube-proxy', 'kube-controller-manager', 'kube-scheduler',
      'kube-api-server', 'service-accounts', 'server/etcd-server', 'server-b/etcd-server', 'etcd-client']);
    for (const id of ids) {
      const files = id.machine ? PKI.machine(id.machine, id.role!) : { crt: PKI.crt(id.name), key: PKI.key(id.name) };
      expect(id.files).toEqual({ crt: files.crt, key: files.key });
    }
    expect(byName('node-0/kubelet').files).toEqual({ crt: 'pki/machines/node-0/kubelet.crt', key: 'pki/machines/node-0/kubelet.key' });
    expect(caIdentities().map((c) => [c.name, c.files])).toEqual([['ca', PKI.ca], ['etcd-ca', PKI.etcdCa]]);
  });

  it('the API server certificate names every control-plane machine, the service IP and domain, and (two control planes) the shared API name', () => {
    expect(byName('kube-api-server').sans).toEqual([
      'IP:127.0.0.1', 'IP:10.32.0.1', 'IP:10.240.0.10', 'IP:10.240.0.11',
      'DNS:kubernetes', 'DNS:kubernetes.default', 'DNS:kubernetes.default.svc', 'DNS:kubernetes.default.svc.cluster',
      'DNS:kubernetes.default.svc.example.internal',
      'DNS:server.kubernetes.local', 'DNS:server', 'DNS:server-b.kubernetes.local', 'DNS:server-b',
      'DNS:api.kubernetes.local',
    ]);
  });

  it('only etcd identities are signed by the etcd CA; node and etcd-server identities name their machine', () => {
    expect(ids.filter((i) => i.issuer === 'etcd-ca').map((i) => i.name)).toEqual(['server/etcd-server', 'server-b/etcd-server', 'etcd-client']);
    expect(byName('node-0/kubelet').machine).toBe('node-0');
    expect(byName('server-b/etcd-server')).toMatchObject({
      machine: 'server-b', subject: { CN: 'server-b' }, usages: ['serverAuth', 'clientAuth'],
      sans: ['IP:10.240.0.11', 'IP:127.0.0.1', 'DNS:server-b', 'DNS:server-b.kubernetes.local', 'DNS:localhost'],
    });
    expect(byName('admin').machine).toBeUndefined();
    expect(byName('kube-scheduler').subject).toEqual({ CN: 'system:kube-scheduler', O: 'system:kube-scheduler' });
  });
});

describe('readPkiFile', () => {
  it('returns the bytes of a file hardway wrote', async () => {
    const p = makeProject({ cluster: 'keyAlgorithm: ecdsa-p256\n' });
    await hardway(p, 'certs');
    expect(readPkiFile({ dir: p.dir }, PKI.crt('admin')).toString()).toMatch(/^-----BEGIN CERTIFICATE-----\n/);
  });

  it.each([
    [PKI.machine('node-0', 'kubelet').crt, 'run hardway certs first'],
    [PKI.machine('node-0', 'kubelet').kubeconfig, 'run hardway kubeconfigs first'],
    [PKI.encryptionConfig, 'run hardway encryption-config first'],
  ])('a missing %s is a failure naming the command that makes it', (path, hint) => {
    const dir = mkdtempSync(join(tmpdir(), 'hardway-read-'));
    let error: unknown;
    try {
      readPkiFile({ dir }, path);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(FailureError);
    expect((error as FailureError).message).toBe(`${path} is missing`);
    expect((error as FailureError).hint).toBe(hint);
  });
});
