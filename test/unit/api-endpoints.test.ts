// Several control-plane machines: where each client dials the API (src/api-endpoints.ts), in the
// certificates and kubeconfigs, the inventory's rule for the shared API name, and verify's reading
// of every etcd member's health. One control plane keeps the tutorial's single name everywhere.
import { describe, expect, it } from 'vitest';
import { componentApiUrl, jumpboxApiUrl, workerApiUrl } from '../../src/api-endpoints.ts';
import { sharedApiName } from '../../src/api-names.ts';
import { identitiesFor } from '../../src/certs/identities.ts';
import { kubeconfigsFor } from '../../src/certs/kubeconfig.ts';
import { InputError } from '../../src/errors.ts';
import { etcdHealthCommand, readEtcdHealth } from '../../src/probes/etcdctl.ts';
import { etcdProblems, expectedServices } from '../../src/steps/verify.ts';
import { workerPackages, WORKER_PACKAGES } from '../../src/steps/worker-os.ts';
import { EXAMPLE, host, inventory, THREE_CP } from './render-fixtures.ts';

const single = inventory(EXAMPLE);
const ha = inventory(THREE_CP);
const servers = (inv: typeof ha) => Object.fromEntries(kubeconfigsFor(inv).map((k) => [k.name, k.server]));

describe('where each client dials the API', () => {
  it('one control plane: every kubeconfig but admin dials https://server.kubernetes.local:6443, as before', () => {
    expect(sharedApiName(single)).toBeUndefined();
    expect(servers(single)).toEqual({
      'node-0/kubelet': 'https://server.kubernetes.local:6443', 'node-1/kubelet': 'https://server.kubernetes.local:6443',
      'kube-proxy': 'https://server.kubernetes.local:6443', 'kube-controller-manager': 'https://server.kubernetes.local:6443',
      'kube-scheduler': 'https://server.kubernetes.local:6443', admin: 'https://127.0.0.1:6443', jumpbox: 'https://server.kubernetes.local:6443',
    });
  });

  it('three: kubelets and kube-proxy the node-local haproxy, the components their own API server, the jumpbox api.kubernetes.local', () => {
    expect(servers(ha)).toEqual({
      'node-0/kubelet': 'https://127.0.0.1:6443', 'node-1/kubelet': 'https://127.0.0.1:6443', 'node-10/kubelet': 'https://127.0.0.1:6443',
      'kube-proxy': 'https://127.0.0.1:6443', 'kube-controller-manager': 'https://127.0.0.1:6443',
      'kube-scheduler': 'https://127.0.0.1:6443', admin: 'https://127.0.0.1:6443', jumpbox: 'https://api.kubernetes.local:6443',
    });
    expect([workerApiUrl(ha), componentApiUrl(ha), jumpboxApiUrl(ha)]).toEqual(['https://127.0.0.1:6443', 'https://127.0.0.1:6443', 'https://api.kubernetes.local:6443']);
  });

  it('the API server certificate carries 127.0.0.1, every control plane, and the shared name only with several', () => {
    const sans = (inv: typeof ha) => identitiesFor(inv).find((i) => i.name === 'kube-api-server')!.sans;
    expect(sans(ha)).toEqual(expect.arrayContaining(['IP:127.0.0.1', 'IP:10.240.0.11', 'IP:10.240.0.12', 'IP:10.240.0.13', 'DNS:cp-3.kubernetes.local', 'DNS:api.kubernetes.local']));
    expect(sans(single).filter((s) => s.includes('api.'))).toEqual([]);
  });

  it('each etcd member\'s certificate names that member (its IPs and names), signed by the etcd CA', () => {
    for (const cp of ha.controlPlanes) {
      const id = identitiesFor(ha).find((i) => i.name === `${cp.hostname}/etcd-server`)!;
      expect(id.sans).toEqual([`IP:${cp.ip}`, 'IP:127.0.0.1', `DNS:${cp.hostname}`, `DNS:${cp.fqdn}`, 'DNS:localhost']);
      expect(id.usages).toEqual(['serverAuth', 'clientAuth']);
      expect(id.issuer).toBe('etcd-ca');
    }
  });

  it('a machine may not be called by the shared API name in a cluster of several control planes (file:line)', () => {
    const text = `${THREE_CP}10.240.0.30 api.kubernetes.local api\n`;
    expect(() => inventory(text)).toThrow(InputError);
    expect(() => inventory(text)).toThrow(/api\.kubernetes\.local" is the name every control-plane machine answers to/);
    expect(inventory(`${EXAMPLE}10.240.0.30 api.kubernetes.local api 10.200.5.0/24\n`).machines).toHaveLength(4);
  });
});

describe('workers and verify with several control planes', () => {
  it('workers need haproxy and run it only with several control planes', () => {
    expect(workerPackages(single)).toEqual(WORKER_PACKAGES);
    expect(workerPackages(ha)).toEqual([...WORKER_PACKAGES, 'haproxy']);
    expect(expectedServices(single, host(single, 'node-0'))).not.toContain('haproxy');
    expect(expectedServices(ha, host(ha, 'node-0'))).toContain('haproxy');
  });

  it('verify asks every etcd member with several control planes, the local one with one', () => {
    expect(etcdHealthCommand(true).text).toContain('endpoint health --cluster');
    expect(etcdHealthCommand().text).toMatch(/endpoint health$/);
  });

  it('names each control plane that is not a healthy etcd member, with what etcdctl said', () => {
    const healthy = (ip: string) => `https://${ip}:2379 is healthy: successfully committed proposal: took = 9.1ms`;
    const all = { code: 0, stdout: ['10.240.0.11', '10.240.0.12', '10.240.0.13'].map(healthy).join('\n') };
    expect(etcdProblems(ha, readEtcdHealth(all))).toEqual([]);
    const one = { code: 1, stdout: `${healthy('10.240.0.11')}\n${healthy('10.240.0.13')}\nhttps://10.240.0.12:2379 is unhealthy: failed to commit proposal: context deadline exceeded\nError: unhealthy cluster` };
    expect(etcdProblems(ha, readEtcdHealth(one))).toEqual(['etcd member(s) not healthy over TLS: cp-2 (10.240.0.12): https://10.240.0.12:2379 is unhealthy: failed to commit proposal: context deadline exceeded']);
    // A member missing from the member list altogether is named too.
    const missing = { code: 0, stdout: `${healthy('10.240.0.11')}\n${healthy('10.240.0.12')}` };
    expect(etcdProblems(ha, readEtcdHealth(missing))[0]).toMatch(/^etcd member\(s\) not healthy over TLS: cp-3 \(10\.240\.0\.13\)/);
    expect(etcdProblems(single, readEtcdHealth({ code: 1, stdout: 'x\nlast' }))).toEqual(['etcd is not healthy over TLS: last']);
  });
});
