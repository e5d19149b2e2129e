// The one command table: every command hardway offers, its summary, and for a command that works on
// the machines its steps (with the lanes that run side by side) and whether it first makes pki/.
// Commands load lazily so that --help and one command stay fast.
import type { CliCommand } from '../cli/command.ts';
import type { StepName } from '../steps/index.ts';
import { isRemote, type CommandEntry, type RemoteCommandEntry } from './entry.ts';

export { isRemote, type CommandEntry, type RemoteCommandEntry } from './entry.ts';

/** The worker's steps, one per component, so each reruns alone (`--only kubelet`); api-proxy (several control planes) before the kubelet dials it. */
const WORKER_STEPS: StepName[] = ['worker-os', 'containerd', 'cni', 'api-proxy', 'kubelet', 'kube-proxy'];

/** The worker lane of up: the images go in once containerd runs and before the kubelet, which needs the sandbox image. */
const UP_WORKER_LANE: StepName[] = ['worker-os', 'containerd', 'images', 'cni', 'api-proxy', 'kubelet', 'kube-proxy'];

/** The command table, in the order a user meets them. */
export const COMMANDS: CommandEntry[] = [
  { name: 'inventory', summary: 'Check machines.txt and cluster.yaml and show what hardway understood', load: async () => (await import('./inventory.ts')).inventoryCommand },
  { name: 'certs', summary: 'Create the CA and every certificate in pki/ (keeps what is still right)', load: async () => (await import('./certs.ts')).certsCommand },
  { name: 'certs check', summary: 'Check every certificate: chain, key, names, expiry', load: async () => (await import('./certs.ts')).certsCheckCommand },
  { name: 'kubeconfigs', summary: 'Write every kubeconfig into pki/, certificates embedded', load: async () => (await import('./kubeconfigs.ts')).kubeconfigsCommand },
  { name: 'encryption-config', summary: 'Write the encryption-at-rest config (key generated once, then kept)', load: async () => (await import('./encryption-config.ts')).encryptionConfigCommand },
  { name: 'render', summary: "Render each machine's files into a directory tree, as they will be installed", load: async () => (await import('./render.ts')).renderCommand },
  { name: 'download', summary: 'Download and verify the binaries into downloads/ (or extract them from Debian packages)', load: async () => (await import('./download.ts')).downloadCommand },
  { name: 'build-images', summary: "Build the pause, web (and CoreDNS) images offline from Debian's packages into images/", load: async () => (await import('./build-images.ts')).buildImagesCommand },
  { name: 'lab up', summary: 'Start local lab machines (systemd-nspawn) with sshd and cloud-init', load: async () => (await import('./lab.ts')).labUpCommand },
  { name: 'lab status', summary: 'Show each lab machine: address, running, SSH reachable', load: async () => (await import('./lab.ts')).labStatusCommand },
  { name: 'lab ssh', summary: 'Open a shell or run a command on a lab machine', load: async () => (await import('./lab.ts')).labSshCommand },
  { name: 'lab reboot', summary: 'Restart a lab machine for real (cloud-init runs again)', load: async () => (await import('./lab.ts')).labRebootCommand },
  { name: 'lab stop', summary: 'Stop one lab machine', load: async () => (await import('./lab.ts')).labStopCommand },
  { name: 'lab start', summary: 'Start a stopped lab machine', load: async () => (await import('./lab.ts')).labStartCommand },
  { name: 'lab break', summary: 'Break a healthy lab machine on purpose (a real fault), for hardway doctor to find', load: async () => (await import('./lab-break.ts')).labBreakCommand },
  { name: 'lab down', summary: 'Stop every lab machine and remove overlays, bridge and mounts', load: async () => (await import('./lab.ts')).labDownCommand },
  { name: 'multipass up', summary: 'Launch Multipass VMs for the cluster and write machines.txt, cluster.yaml, known_hosts, ssh_config', load: async () => (await import('./multipass.ts')).multipassUpCommand },
  { name: 'multipass status', summary: 'Show each VM hardway launched: state, addresses, the address in machines.txt, SSH', load: async () => (await import('./multipass.ts')).multipassStatusCommand },
  { name: 'multipass down', summary: 'Delete and purge the VMs hardway launched (only those), keep the files in DIR', load: async () => (await import('./multipass.ts')).multipassDownCommand },
  { name: 'pin-hosts', summary: "Pin every machine name in /etc/hosts and cloud-init's hosts template", steps: ['pin-hosts'] },
  { name: 'distribute', summary: 'Give every machine exactly its own certificates, keys and kubeconfigs', steps: ['distribute'] },
  { name: 'bootstrap-etcd', summary: 'Run etcd over TLS on the control-plane machines', steps: ['bootstrap-etcd'] },
  { name: 'bootstrap-control-plane', summary: 'Run the API server, controller manager and scheduler', steps: ['bootstrap-control-plane', 'kubelet-rbac'] },
  { name: 'bootstrap-workers', summary: 'Set up containerd, CNI, the API proxy (several control planes), kubelet and kube-proxy on the workers', steps: WORKER_STEPS },
  { name: 'images', summary: "Load the image archives of images/ into containerd on every worker (no registry needed)", steps: ['images'] },
  { name: 'routes', summary: "Route every worker's pod subnet via that worker, persisted", steps: ['routes'] },
  { name: 'dns', summary: 'Run the cluster DNS add-on: CoreDNS and the kube-dns Service every pod asks (dns in cluster.yaml)', steps: ['dns'] },
  { name: 'verify', summary: 'Read-only checks of the whole cluster', steps: ['verify'] },
  { name: 'doctor', summary: 'Explain what is wrong, most likely cause first, and the command that fixes it (read-only)', load: async () => (await import('./doctor.ts')).doctorCommand },
  { name: 'etcd snapshot save', summary: "Save a snapshot of the cluster's etcd on the jumpbox (0600, verified with etcdctl snapshot status)", load: async () => (await import('./etcd-snapshot.ts')).etcdSnapshotSaveCommand },
  { name: 'etcd snapshot restore', summary: 'Restore every etcd member from a snapshot (stops the control plane and etcd, restores, starts them)', load: async () => (await import('./etcd-snapshot.ts')).etcdSnapshotRestoreCommand },
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

/** The remote command of this name (for tests and tools that run one directly). */
export function remoteEntry(name: string): RemoteCommandEntry {
  const entry = COMMANDS.find((c) => c.name === name);
  if (!entry || !isRemote(entry)) throw new Error(`no remote command "${name}"`);
  return entry;
}

/** Loads the CLI command of an entry. */
export async function loadCommand(entry: CommandEntry): Promise<CliCommand> {
  return isRemote(entry) ? (await import('./remote.ts')).remoteCommand(entry) : entry.load();
}
