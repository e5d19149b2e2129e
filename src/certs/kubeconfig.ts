// Kubeconfigs: which ones the cluster needs, and each one rendered as data with the `yaml` package,
// certificate, key and CA embedded. Rendering is deterministic, so a rerun produces the same bytes.
import { stringify } from 'yaml';
import { componentApiUrl, jumpboxApiUrl, loopbackApiUrl, workerApiUrl } from '../api-endpoints.ts';
import type { Inventory } from '../inventory.ts';
import { PKI } from '../layout.ts';
import { machineIdentityName } from './identities.ts';

/** The cluster name every kubeconfig uses. */
export const CLUSTER_NAME = 'kubernetes-the-hard-way';

/** One kubeconfig: its file, the identity whose certificate it embeds, the user name, the server. */
export interface KubeconfigSpec {
  /** The name in output: admin, kube-proxy, ... or node-0/kubelet for a worker's (pki/machines/node-0/kubelet.kubeconfig). */
  name: string;
  file: string;
  /** The name of the leaf identity it carries (see identitiesFor). */
  identity: string;
  /** That identity's certificate and key in pki/. */
  certificate: { crt: string; key: string };
  user: string;
  server: string;
}

/** Every kubeconfig for an inventory: one per worker, the components', admin (local) and jumpbox (the user's); servers from src/api-endpoints.ts. */
export function kubeconfigsFor(inv: Inventory): KubeconfigSpec[] {
  const spec = (name: string, identity: string, user: string, server = inv.apiServerUrl): KubeconfigSpec => ({
    name, file: PKI.kubeconfig(name), identity, certificate: { crt: PKI.crt(identity), key: PKI.key(identity) }, user, server,
  });
  const kubelet = (hostname: string): KubeconfigSpec => {
    const files = PKI.machine(hostname, 'kubelet');
    const name = machineIdentityName(hostname, 'kubelet');
    return { name, file: files.kubeconfig, identity: name, certificate: { crt: files.crt, key: files.key }, user: `system:node:${hostname}`, server: workerApiUrl(inv) };
  };
  return [
    ...inv.workers.map((m) => kubelet(m.hostname)),
    spec('kube-proxy', 'kube-proxy', 'system:kube-proxy', workerApiUrl(inv)),
    spec('kube-controller-manager', 'kube-controller-manager', 'system:kube-controller-manager', componentApiUrl(inv)),
    spec('kube-scheduler', 'kube-scheduler', 'system:kube-scheduler', componentApiUrl(inv)),
    // On the server itself, kubectl talks to the local API server.
    spec('admin', 'admin', 'admin', loopbackApiUrl(inv)),
    // The user's own kubeconfig on the jumpbox.
    spec('jumpbox', 'admin', 'admin', jumpboxApiUrl(inv)),
  ];
}

/** The PEM texts a kubeconfig embeds. Secret: the result must never be printed. */
export interface KubeconfigMaterial {
  caPem: string;
  certPem: string;
  keyPem: string;
}

/** Renders one kubeconfig as YAML text, everything embedded, context `default` selected. */
export function renderKubeconfig(spec: KubeconfigSpec, m: KubeconfigMaterial): string {
  const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');
  const config = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: CLUSTER_NAME, cluster: { 'certificate-authority-data': b64(m.caPem), server: spec.server } }],
    users: [{ name: spec.user, user: { 'client-certificate-data': b64(m.certPem), 'client-key-data': b64(m.keyPem) } }],
    contexts: [{ name: 'default', context: { cluster: CLUSTER_NAME, user: spec.user } }],
    'current-context': 'default',
    preferences: {},
  };
  // lineWidth 0: never fold the long base64 lines.
  return stringify(config, { lineWidth: 0 });
}
