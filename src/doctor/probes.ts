// What doctor's checks read on each machine, shared by the checks that ask it: the services and
// certificates of each role, the kubeconfigs it reads (never a key), and the keys some answers are
// kept under. The batch itself is derived from the checks (batch.ts).
import type { Machine } from '../inventory.ts';
import { SERVER, WORKER } from '../layout.ts';
import type { ProbeRequest } from '../probes/probe.ts';
import { CONTROL_PLANE_SERVICES, servicesOfStep, WORKER_SERVICES } from '../command-table.ts';

/** The services doctor expects active on a machine of this role (the step table's own lists). */
export function servicesOf(m: Machine): string[] {
  return m.role === 'control-plane' ? [...servicesOfStep('bootstrap-etcd'), ...CONTROL_PLANE_SERVICES] : [...WORKER_SERVICES];
}

/** A kubeconfig whose server and client certificate doctor reads (never its key). */
export const KUBECONFIGS = { kubelet: WORKER.kubeletKubeconfig, 'kube-proxy': WORKER.kubeProxyKubeconfig } as const;

/** Certificates doctor reads on each role: the installed path and the pki/ file it came from. */
export function certificateFiles(m: Machine): { path: string; pki: string; what: string }[] {
  if (m.role === 'control-plane') {
    return [
      { path: SERVER.caCrt, pki: 'pki/ca.crt', what: 'the cluster CA' },
      { path: SERVER.apiServerCrt, pki: 'pki/kube-api-server.crt', what: "the API server's serving certificate" },
    ];
  }
  return [
    { path: WORKER.kubeletCaCrt, pki: 'pki/ca.crt', what: "the CA the kubelet trusts for clients" },
    { path: WORKER.kubeletCrt, pki: `pki/machines/${m.hostname}/kubelet.crt`, what: "the kubelet's serving certificate" },
  ];
}

/** The request of one machine: files to read (text, never secrets) and probes of the registry, by the name their answer is kept under. */
export interface MachineRequests {
  reads: string[];
  probes: Record<string, ProbeRequest>;
}

/** Probe name of the kubelet's resolver file, systemd-resolved's state and that file's nameservers. */
export const KUBELET_DNS_PROBE = 'kubelet dns';

/** Probe name of the list of images in the node's cache (containerd's k8s.io namespace). */
export const CACHED_PROBE = 'cached images';

/** Probe name of the test pull of one image. */
export const pullProbe = (image: string) => `pull ${image}`;
