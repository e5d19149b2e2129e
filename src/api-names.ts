// The API server's names that machines must not take: the `kubernetes` Service's (its certificate
// carries them) and, with several control planes, the one name pinned to all of them. Pure, and
// importing nothing of the inventory, which checks machines.txt against them.

/**
 * The names of the `kubernetes` Service, which the API server's certificate carries: they mean the
 * API server, so no worker may take one (pin-hosts would point them at that worker everywhere).
 */
export function apiServiceNames(clusterDomain: string): string[] {
  return ['kubernetes', 'kubernetes.default', 'kubernetes.default.svc', 'kubernetes.default.svc.cluster', `kubernetes.default.svc.${clusterDomain}`];
}

/**
 * With several control planes, the name pinned to every one of them (`api.` + the first control
 * plane's domain, e.g. api.kubernetes.local), which the jumpbox's kubeconfig dials; none otherwise.
 */
export function sharedApiName(inv: { controlPlanes: readonly { fqdn: string }[] }): string | undefined {
  if (inv.controlPlanes.length < 2) return undefined;
  return `api.${inv.controlPlanes[0]!.fqdn.split('.').slice(1).join('.')}`;
}
