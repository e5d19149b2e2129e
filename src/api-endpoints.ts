// Where each client reaches the API server. One control-plane machine: everyone dials its FQDN, as
// the tutorial does. Several: nobody may depend on one of them, so the kubelet and kube-proxy dial
// a node-local haproxy on 127.0.0.1 (the api-proxy step), the controller manager and scheduler
// their own machine's API server, and the jumpbox a name that resolves to every control plane
// (kubectl, like every Go program, tries each address of a name in turn).
import type { Inventory, Machine } from './inventory.ts';
import { sharedApiName } from './api-names.ts';

/** Whether the cluster has several control-plane machines (then no client depends on one of them). */
export function severalControlPlanes(inv: Pick<Inventory, 'controlPlanes'>): boolean {
  return inv.controlPlanes.length > 1;
}

/** The loopback URL of an API server on the same machine (or of the node-local proxy in front of them). */
export function loopbackApiUrl(inv: Pick<Inventory, 'settings'>): string {
  return `https://127.0.0.1:${inv.settings.apiPort}`;
}

/** The URL the kubelet and kube-proxy dial: the node-local haproxy with several control planes. */
export function workerApiUrl(inv: Inventory): string {
  return severalControlPlanes(inv) ? loopbackApiUrl(inv) : inv.apiServerUrl;
}

/** The URL the controller manager and scheduler dial: their own machine's API server with several control planes. */
export function componentApiUrl(inv: Inventory): string {
  return severalControlPlanes(inv) ? loopbackApiUrl(inv) : inv.apiServerUrl;
}

/** The URL the jumpbox's kubeconfig dials: the shared API name with several control planes. */
export function jumpboxApiUrl(inv: Inventory): string {
  const name = sharedApiName(inv);
  return name ? `https://${name}:${inv.settings.apiPort}` : inv.apiServerUrl;
}

/** The `IP NAME` lines that pin the shared API name to every control plane (none with one). */
export function sharedApiHostsLines(inv: Pick<Inventory, 'controlPlanes'>): string[] {
  const name = sharedApiName(inv);
  return name ? inv.controlPlanes.map((m: Machine) => `${m.ip} ${name}`) : [];
}
