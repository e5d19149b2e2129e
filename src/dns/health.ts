// Is cluster DNS serving? Read from the API: the CoreDNS Deployment available and the kube-dns
// Service with ready endpoints. Pure, so verify, doctor and tests read the same answer.
import type { Inventory } from '../inventory.ts';
import { findObject, type KubeObject } from '../probes/kubectl.ts';
import { DNS_DEPLOYMENT, DNS_SERVICE } from './manifest.ts';

/** The objects that show whether DNS serves, by TYPE/NAME (read in the system namespace). */
export const DNS_HEALTH_OBJECTS = [`deployment/${DNS_DEPLOYMENT}`, `endpoints/${DNS_SERVICE}`] as const;

interface HealthObject extends KubeObject {
  spec?: { replicas?: number };
  status?: { availableReplicas?: number; readyReplicas?: number; conditions?: { type: string; status: string; message?: string }[] };
  subsets?: { addresses?: { ip: string }[]; notReadyAddresses?: { ip: string }[] }[];
}

/** What keeps cluster DNS from serving, as verify words it (none when the add-on is off or all is well). */
export function dnsHealthProblems(inv: Inventory, items: readonly HealthObject[]): string[] {
  if (!inv.settings.dns.enabled) return [];
  const deployment = findObject(items, 'Deployment', DNS_DEPLOYMENT);
  if (!deployment) return [`the CoreDNS Deployment kube-system/${DNS_DEPLOYMENT} does not exist (run "hardway dns")`];
  const problems: string[] = [];
  const want = deployment.spec?.replicas ?? 0;
  const available = deployment.status?.availableReplicas ?? 0;
  if (want === 0) problems.push(`CoreDNS is scaled to 0 replicas (run "hardway dns")`);
  else if (available === 0) problems.push(`CoreDNS is not available: 0 of ${want} replicas ready (run "hardway doctor" to see why)`);
  const endpoints = findObject(items, 'Endpoints', DNS_SERVICE);
  const ready = (endpoints?.subsets ?? []).flatMap((s) => s.addresses ?? []);
  if (want > 0 && available > 0 && ready.length === 0) problems.push(`the kube-dns Service at ${inv.clusterDnsIp} has no ready endpoints`);
  return problems;
}
