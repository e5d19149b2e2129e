// Which CoreDNS image the cluster runs: dns.image of cluster.yaml, else the one that fits its
// Kubernetes release. For 1.20 (the release hardway builds offline from Debian's source) that is
// hardway's own offline build; from 1.21 on, the upstream image kubeadm pins for that release,
// which containerd pulls (machines with internet, or a registry mirror).
import type { ClusterSettings } from '../cluster-settings.ts';
import { COREDNS_IMAGE } from '../images/names.ts';

/** The upstream CoreDNS release kubeadm installs with each Kubernetes minor (coredns/deployment's CoreDNS-k8s_version.md). */
export const KUBEADM_COREDNS: Readonly<Record<number, string>> = {
  21: 'v1.8.0', 22: 'v1.8.4', 23: 'v1.8.6', 24: 'v1.8.6', 25: 'v1.9.3', 26: 'v1.9.3',
  27: 'v1.10.1', 28: 'v1.10.1', 29: 'v1.11.1', 30: 'v1.11.1', 31: 'v1.11.3', 32: 'v1.11.3',
};

/** The CoreDNS image for a cluster of Kubernetes minor `minor` (1.x). */
export function corednsImage(settings: Pick<ClusterSettings, 'dns'>, minor: number): string {
  if (settings.dns.image !== undefined) return settings.dns.image;
  const upstream = KUBEADM_COREDNS[minor];
  return upstream === undefined ? COREDNS_IMAGE : `registry.k8s.io/coredns/coredns:${upstream}`;
}

/** Whether the cluster runs hardway's offline CoreDNS build (so `build-images` must make it). */
export function usesOfflineCoredns(settings: Pick<ClusterSettings, 'dns'>, minor: number): boolean {
  return settings.dns.enabled && corednsImage(settings, minor) === COREDNS_IMAGE;
}
