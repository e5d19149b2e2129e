// The files of a control-plane machine: etcd over TLS, the API server, controller manager and
// scheduler units, and the scheduler's and audit configuration.
import type { Inventory, Machine } from '../inventory.ts';
import { ANY, SERVER } from '../layout.ts';
import type { KubernetesDifferences } from './kubernetes-version.ts';
import type { TemplateSet } from './templates.ts';
import type { RenderedFile } from './types.ts';

/** Admission plugins the API server enables (the KTHW set). */
export const ADMISSION_PLUGINS = [
  'NamespaceLifecycle',
  'NodeRestriction',
  'LimitRanger',
  'ServiceAccount',
  'DefaultStorageClass',
  'ResourceQuota',
];

/** etcd's --initial-cluster: every control-plane machine as name=https://ip:2380. */
export function etcdInitialCluster(inv: Inventory): string {
  return inv.controlPlanes.map((m) => `${m.hostname}=https://${m.ip}:2380`).join(',');
}

/** etcd's --initial-cluster-token: derived from the API server's name so that two clusters on one network never join each other. */
export function etcdClusterToken(inv: Inventory): string {
  return `etcd-${inv.apiServerName}`;
}

/** The API server's --etcd-servers: its own etcd over loopback first, then the other control planes. */
export function etcdServers(inv: Inventory, machine: Machine): string {
  const others = inv.controlPlanes.filter((m) => m.hostname !== machine.hostname);
  return ['https://127.0.0.1:2379', ...others.map((m) => `https://${m.ip}:2379`)].join(',');
}

/** Every file a control-plane machine gets from rendering (hosts and routes aside), for that Kubernetes release. */
export function renderControlPlane(inv: Inventory, machine: Machine, templates: TemplateSet, k8s: KubernetesDifferences): RenderedFile[] {
  const values = {
    SERVER,
    machine,
    settings: inv.settings,
    etcd: {
      initialCluster: etcdInitialCluster(inv),
      clusterToken: etcdClusterToken(inv),
    },
    apiServer: {
      etcdServers: etcdServers(inv, machine),
      admissionPlugins: ADMISSION_PLUGINS.join(','),
      issuer: inv.apiServerUrl,
    },
    scheduler: { configVersion: k8s.schedulerConfigVersion },
  };
  const unit = (name: string, step: RenderedFile['step']): RenderedFile => ({
    path: `${ANY.units}/${name}.service`,
    content: templates.render(`units/${name}.service.hbs`, values),
    mode: 0o644,
    step,
    services: [name],
  });
  const config = (path: string, template: string, services: string[]): RenderedFile => ({
    path,
    content: templates.render(`templates/${template}`, values),
    mode: 0o644,
    step: 'bootstrap-control-plane',
    services,
  });
  return [
    unit('etcd', 'bootstrap-etcd'),
    unit('kube-apiserver', 'bootstrap-control-plane'),
    config(SERVER.auditPolicy, 'audit-policy.yaml.hbs', ['kube-apiserver']),
    unit('kube-controller-manager', 'bootstrap-control-plane'),
    unit('kube-scheduler', 'bootstrap-control-plane'),
    config(SERVER.schedulerConfig, 'kube-scheduler.yaml.hbs', ['kube-scheduler']),
  ];
}
