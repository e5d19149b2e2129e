// Where each pki/ file goes on a machine, and which services read it: distribute installs these,
// verify checks them, and the kill test compares the machines with them.
import { PKI, SERVER, WORKER } from '../../layout.ts';
import type { Inventory, Machine } from '../../inventory.ts';
import { severalControlPlanes } from '../../api-endpoints.ts';
import { API_PROXY_SERVICE } from '../../render/worker.ts';
import { readPkiFile } from '../../certs/identities.ts';
import { pemBlocks } from '../../certs/pem.ts';

/** One pki/ file installed on a machine, and the services that read it. */
interface Placement {
  from: string;
  to: string;
  secret: boolean;
  services: string[];
  /** Install only the first certificate of `from` (a CA bundle's signing CA). */
  firstCertificate?: boolean;
}

/** The bytes a placement installs: its pki/ file, or that file's first certificate. */
export function placementContent(inv: Pick<Inventory, 'dir'>, p: Placement): Buffer {
  const content = readPkiFile(inv, p.from);
  return p.firstCertificate ? Buffer.from(pemBlocks(content.toString('utf8'))[0]!, 'utf8') : content;
}

const pub = (from: string, to: string, ...services: string[]): Placement => ({ from, to, secret: false, services });
const secret = (from: string, to: string, ...services: string[]): Placement => ({ from, to, secret: true, services });

/** Where each pki/ file goes on a machine of this role (paths from src/layout.ts). */
export function placements(inv: Inventory, m: Machine): Placement[] {
  if (m.role === 'control-plane') {
    const etcd = PKI.machine(m.hostname, 'etcd-server');
    return [
      pub(PKI.ca.crt, SERVER.caCrt, 'kube-apiserver', 'kube-controller-manager'),
      secret(PKI.ca.key, SERVER.caKey, 'kube-controller-manager'),
      { ...pub(PKI.ca.crt, SERVER.caSigningCrt, 'kube-controller-manager'), firstCertificate: true },
      pub(PKI.crt('kube-api-server'), SERVER.apiServerCrt, 'kube-apiserver'),
      secret(PKI.key('kube-api-server'), SERVER.apiServerKey, 'kube-apiserver'),
      pub(PKI.crt('service-accounts'), SERVER.serviceAccountsCrt, 'kube-apiserver'),
      secret(PKI.key('service-accounts'), SERVER.serviceAccountsKey, 'kube-apiserver', 'kube-controller-manager'),
      secret(PKI.encryptionConfig, SERVER.encryptionConfig, 'kube-apiserver'),
      secret(PKI.kubeconfig('kube-controller-manager'), SERVER.controllerManagerKubeconfig, 'kube-controller-manager'),
      secret(PKI.kubeconfig('kube-scheduler'), SERVER.schedulerKubeconfig, 'kube-scheduler'),
      secret(PKI.kubeconfig('admin'), SERVER.adminKubeconfig),
      pub(PKI.etcdCa.crt, SERVER.etcdCaCrt, 'kube-apiserver'),
      pub(PKI.crt('etcd-client'), SERVER.etcdClientCrt, 'kube-apiserver'),
      secret(PKI.key('etcd-client'), SERVER.etcdClientKey, 'kube-apiserver'),
      pub(PKI.etcdCa.crt, SERVER.etcdCa, 'etcd'),
      pub(etcd.crt, SERVER.etcdCrt, 'etcd'),
      secret(etcd.key, SERVER.etcdKey, 'etcd'),
    ];
  }
  const kubelet = PKI.machine(m.hostname, 'kubelet');
  // The node-local haproxy checks the API servers against the same CA.
  const caReaders = severalControlPlanes(inv) ? ['kubelet', API_PROXY_SERVICE] : ['kubelet'];
  return [
    pub(PKI.ca.crt, WORKER.kubeletCaCrt, ...caReaders),
    pub(kubelet.crt, WORKER.kubeletCrt, 'kubelet'),
    secret(kubelet.key, WORKER.kubeletKey, 'kubelet'),
    secret(kubelet.kubeconfig, WORKER.kubeletKubeconfig, 'kubelet'),
    secret(PKI.kubeconfig('kube-proxy'), WORKER.kubeProxyKubeconfig, 'kube-proxy'),
  ];
}

/** Control-plane secrets that must never be on a worker. */
export const NEVER_ON_WORKERS: string[] = [SERVER.caKey, SERVER.serviceAccountsKey, SERVER.encryptionConfig, SERVER.etcdKey, SERVER.etcdClientKey, SERVER.apiServerKey];
