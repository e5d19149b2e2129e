// The cluster DNS add-on's objects (templates/coredns.yaml.hbs) for one cluster: rendered strictly,
// then split into the objects the dns step compares with the live ones, one by one.
import { parseAllDocuments } from 'yaml';
import type { Inventory } from '../inventory.ts';
import { sharedTemplateSet } from '../render/templates.ts';
import { corednsImage } from './image.ts';

/** The template every object of the add-on comes from. */
export const DNS_TEMPLATE = 'templates/coredns.yaml.hbs';

/** CoreDNS replicas: two, so one node going away leaves name resolution up. */
export const DNS_REPLICAS = 2;

/** The namespace of the add-on's namespaced objects. */
export const DNS_NAMESPACE = 'kube-system';

/** The Deployment, the Service and the label their pods carry. */
export const DNS_DEPLOYMENT = 'coredns';
export const DNS_SERVICE = 'kube-dns';
export const DNS_POD_LABEL = 'k8s-app=kube-dns';

/** One object of the add-on: how kubectl names it (TYPE/NAME), its YAML document and its parsed form. */
export interface DnsObject {
  resource: string;
  kind: string;
  name: string;
  yaml: string;
  object: Record<string, unknown>;
}

/** The add-on's objects in apply order (service account and RBAC before the pods that use them). */
export function dnsObjects(inv: Inventory, kubernetesMinor: number, templateRoot?: string): DnsObject[] {
  const text = sharedTemplateSet(templateRoot).render(DNS_TEMPLATE, {
    image: corednsImage(inv.settings, kubernetesMinor),
    clusterIP: inv.clusterDnsIp,
    domain: inv.settings.clusterDomain,
    replicas: DNS_REPLICAS,
  });
  return parseAllDocuments(text).map((doc) => {
    const object = doc.toJSON() as { kind: string; metadata: { name: string } };
    return {
      resource: `${object.kind.toLowerCase()}/${object.metadata.name}`,
      kind: object.kind,
      name: object.metadata.name,
      yaml: `---\n${String(doc).replace(/^---\n/, '')}`,
      object,
    };
  });
}
