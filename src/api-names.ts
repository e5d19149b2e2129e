// The names that machines must not take: the `kubernetes` Service's (the API server's certificate
// carries them), every Service's under svc.<clusterDomain> and the cluster domain itself, and, with
// several control planes, the one name pinned to all of them. Pure, and importing nothing of the
// inventory, which checks machines.txt against them.

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

/**
 * Why a machine may not be called `name` in a cluster whose DNS domain is `clusterDomain`: the
 * domain itself, or a name under svc.<clusterDomain>, where every Service has its name (e.g.
 * kube-dns.kube-system.svc.cluster.local): the machine's certificates would carry a Service's name
 * and pin-hosts would point it at the machine. Undefined for any other name.
 */
export function clusterDomainClash(name: string, clusterDomain: string): string | undefined {
  const domain = clusterDomain.toLowerCase();
  const n = name.toLowerCase();
  if (n === domain) return `is the cluster's DNS domain (clusterDomain ${domain})`;
  if (n === `svc.${domain}` || n.endsWith(`.svc.${domain}`)) return `is under svc.${domain}, where the cluster's Services have their names (clusterDomain ${domain})`;
  return undefined;
}
