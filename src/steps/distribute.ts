// distribute: every machine gets exactly its own certificates, keys and kubeconfigs from pki/.
// Keys and kubeconfigs are 0600 and secret (never shown in plans or logs). The CA key goes only to
// control-plane machines; a worker gets its own node key and nothing else secret, and any
// control-plane secret found on a worker (from an earlier hand install) is removed.
import { PKI, SERVER, WORKER } from '../layout.ts';
import { readPkiFile } from '../certs/identities.ts';
import type { Inventory, Machine } from '../inventory.ts';
import type { DesiredFile } from '../engine/desired.ts';
import type { Change, Step, StepContext } from '../engine/types.ts';
import { sh } from '../shell.ts';
import { fileChangesFrom, inspect } from './support/inspect.ts';
import { withRestarts, type ServiceInput } from './support/services.ts';

/** One pki/ file installed on a machine, and the services that read it. */
interface Placement {
  from: string;
  to: string;
  secret: boolean;
  services: string[];
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
  return [
    pub(PKI.ca.crt, WORKER.kubeletCaCrt, 'kubelet'),
    pub(kubelet.crt, WORKER.kubeletCrt, 'kubelet'),
    secret(kubelet.key, WORKER.kubeletKey, 'kubelet'),
    secret(kubelet.kubeconfig, WORKER.kubeletKubeconfig, 'kubelet'),
    secret(PKI.kubeconfig('kube-proxy'), WORKER.kubeProxyKubeconfig, 'kube-proxy'),
  ];
}

/** Control-plane secrets that must never be on a worker. */
const NEVER_ON_WORKERS: string[] = [SERVER.caKey, SERVER.serviceAccountsKey, SERVER.encryptionConfig, SERVER.etcdKey, SERVER.etcdClientKey, SERVER.apiServerKey];

/** The distribute step. */
export const distributeStep: Step = {
  name: 'distribute',
  title: 'Give every machine exactly its own certificates, keys and kubeconfigs',
  targets: (inv) => inv.machines,
  async plan(ctx: StepContext): Promise<Change[]> {
    const { inventory, machine, facts } = ctx;
    const wanted = placements(inventory, machine);
    const desired: DesiredFile[] = wanted.map((p) => ({
      path: p.to,
      content: readPkiFile(inventory, p.from),
      mode: p.secret ? 0o600 : 0o644,
      secret: p.secret,
    }));
    const forbidden = machine.role === 'worker' ? NEVER_ON_WORKERS : [];
    const inputs: ServiceInput[] = wanted.map((p) => ({ path: p.to, services: p.services }));
    const found = await inspect(facts, [...desired.map((d) => d.path), ...forbidden], [...new Set(inputs.flatMap((i) => i.services))]);
    const changes = fileChangesFrom(found, desired);
    const present = forbidden.filter((p) => found.files.get(p)!.exists);
    if (present.length > 0) {
      changes.push({ kind: 'exec', cmd: sh`rm -f ${present}`, reason: 'control-plane secrets do not belong on a worker' });
    }
    return withRestarts(found.services, inputs, changes);
  },
};
