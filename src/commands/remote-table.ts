// The commands that work on the machines: each one's steps (with the lanes that run side by side),
// whether it first makes pki/, what it destroys, what scopes it. Data only: the one table
// (src/commands/index.ts) lists them among the others, and a command that runs another's steps
// inside its own run (certs --renew-ca asks distribute) finds it here.
import type { StepName } from '../steps/index.ts';
import type { RemoteCommandEntry } from './entry.ts';

/** The worker's steps, one per component, so each reruns alone (`--only kubelet`); api-proxy (several control planes) before the kubelet dials it. */
const WORKER_STEPS: StepName[] = ['worker-os', 'containerd', 'cni', 'api-proxy', 'kubelet', 'kube-proxy'];

/** The worker lane of up: the images go in once containerd runs and before the kubelet, which needs the sandbox image. */
const UP_WORKER_LANE: StepName[] = ['worker-os', 'containerd', 'images', 'cni', 'api-proxy', 'kubelet', 'kube-proxy'];

/** Every command that works on the machines, in the order the table shows them. */
export const REMOTE_COMMANDS: readonly RemoteCommandEntry[] = [
  { name: 'pin-hosts', summary: "Pin every machine name in /etc/hosts and cloud-init's hosts template", steps: ['pin-hosts'] },
  { name: 'distribute', summary: 'Give every machine exactly its own certificates, keys and kubeconfigs', steps: ['distribute'] },
  { name: 'bootstrap-etcd', summary: 'Run etcd over TLS on the control-plane machines', steps: ['bootstrap-etcd'] },
  { name: 'bootstrap-control-plane', summary: 'Run the API server, controller manager and scheduler', steps: ['bootstrap-control-plane', 'kubelet-rbac'] },
  { name: 'bootstrap-workers', summary: 'Set up containerd, CNI, the API proxy (several control planes), kubelet and kube-proxy on the workers', steps: WORKER_STEPS },
  { name: 'images', summary: "Load the image archives of images/ into containerd on every worker (no registry needed)", steps: ['images'] },
  { name: 'routes', summary: "Route every worker's pod subnet via that worker, persisted", steps: ['routes'] },
  { name: 'dns', summary: 'Run the cluster DNS add-on: CoreDNS and the kube-dns Service every pod asks (dns in cluster.yaml)', steps: ['dns'] },
  { name: 'verify', summary: 'Read-only checks of the whole cluster', steps: ['verify'] },
  { name: 'smoke', summary: 'Smoke-test a finished cluster: encrypted secrets, a pod, logs, exec, port-forward, NodePort', steps: ['smoke'] },
  { name: 'reset', summary: 'Remove everything hardway installed on the machines (etcd data only with --delete-data etcd)', steps: ['reset'],
    confirm: 'removes every service, file, certificate and route hardway installed on the chosen machines' },
  { name: 'remove-node', summary: 'Take a worker out: drain it, delete its Node, reset it, drop its names and routes everywhere', args: 'NAME',
    steps: ['drain-node', 'reset', 'pin-hosts', 'routes'], confirm: 'drains the machine and removes everything hardway installed on it',
    details: 'NAME is a worker of machines.txt, or one whose line is already gone: then its address and names come from the certificate hardway ' +
      'issued for it, pki/machines/NAME/kubelet.crt (kept as the record). drain-node (on the first control-plane machine) cordons and drains ' +
      'NAME and deletes its Node, reset clears NAME, then pin-hosts and routes run on every other machine as if NAME were not in machines.txt. ' +
      'A machine that is gone for good cannot be reset: --keep-going still updates the others. Then remove its line from machines.txt.',
    scope: async () => (await import('./remove-node.ts')).removalScope },
  { name: 'up', summary: 'Everything, in order: pin-hosts, distribute, etcd, control plane, workers (images after containerd), routes, cluster DNS, verify', preparesPki: true,
    // Control plane and workers are disjoint machines: their two lanes run side by side.
    steps: ['pin-hosts', 'distribute', { lanes: [['bootstrap-etcd', 'bootstrap-control-plane', 'kubelet-rbac'], UP_WORKER_LANE] }, 'routes', 'dns', 'verify'] },
];

/** The remote command of this name. */
export function remoteEntry(name: string): RemoteCommandEntry {
  const entry = REMOTE_COMMANDS.find((c) => c.name === name);
  if (!entry) throw new Error(`no remote command "${name}"`);
  return entry;
}
