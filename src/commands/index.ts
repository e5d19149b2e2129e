// The one command table: every command hardway offers, its summary, and for a command that works on
// the machines its steps (with the lanes that run side by side) and whether it first makes pki/.
// Commands load lazily so that --help and one command stay fast.
import type { CliCommand } from '../cli/command.ts';
import type { StepName } from '../steps/index.ts';
import { isRemote, type CommandEntry, type CommandGroup, type RemoteCommandEntry } from './entry.ts';

export { isRemote, type CommandEntry, type CommandGroup, type RemoteCommandEntry } from './entry.ts';

/** The worker's steps, one per component, so each reruns alone (`--only kubelet`); api-proxy (several control planes) before the kubelet dials it. */
const WORKER_STEPS: StepName[] = ['worker-os', 'containerd', 'cni', 'api-proxy', 'kubelet', 'kube-proxy'];

/** The worker lane of up: the images go in once containerd runs and before the kubelet, which needs the sandbox image. */
const UP_WORKER_LANE: StepName[] = ['worker-os', 'containerd', 'images', 'cni', 'api-proxy', 'kubelet', 'kube-proxy'];

/** The headings of the top-level help, in the order a newcomer needs them. */
export const GROUPS: CommandGroup[] = [
  { key: 'machines', title: 'Machines to build on' },
  { key: 'project', title: 'The project on this machine (no SSH)' },
  { key: 'cluster', title: 'Build the cluster (over SSH; each a step of up)' },
  { key: 'day-two', title: 'Day two' },
];

/** Words that start several commands (`hardway lab`): what the group is, for its help. */
export const SUBCOMMAND_GROUPS: Record<string, string> = {
  lab: 'Local lab machines to build a cluster on: systemd-nspawn containers with sshd and cloud-init, on a bridge of their own. Needs root and Debian.',
  multipass: 'Multipass VMs to build a cluster on, their host keys pinned before the first connection.',
  etcd: "The cluster's etcd: snapshots saved on this machine and restored to every member.",
  'etcd snapshot': "Save a snapshot of the cluster's etcd, or restore every member from one.",
};

/** Other words people type for a command: `hardway install` suggests up. */
export const COMMAND_ALIASES: Record<string, string> = {
  install: 'up', deploy: 'up', apply: 'up', create: 'up', bootstrap: 'up',
  uninstall: 'reset', destroy: 'reset', teardown: 'reset', delete: 'reset',
  check: 'verify', test: 'smoke', status: 'verify', diagnose: 'doctor', debug: 'doctor',
  backup: 'etcd snapshot save', restore: 'etcd snapshot restore', inv: 'inventory',
};

/** The command table, in the order a user meets them. */
export const COMMANDS: CommandEntry[] = [
  { name: 'inventory', group: 'project', summary: 'Check machines.txt and cluster.yaml, show the result', load: async () => (await import('./inventory.ts')).inventoryCommand },
  { name: 'certs', group: 'project', summary: 'Make pki/: the CAs and certificates (keeps good ones)', load: async () => (await import('./certs.ts')).certsCommand },
  { name: 'certs check', group: 'project', summary: 'Check every certificate: chain, key, names, expiry', load: async () => (await import('./certs.ts')).certsCheckCommand },
  { name: 'kubeconfigs', group: 'project', summary: 'Write every kubeconfig into pki/', load: async () => (await import('./kubeconfigs.ts')).kubeconfigsCommand },
  { name: 'encryption-config', group: 'project', summary: 'Write the secrets encryption config (key made once)', load: async () => (await import('./encryption-config.ts')).encryptionConfigCommand },
  { name: 'render', group: 'project', summary: "Write each machine's files into a directory, to read", load: async () => (await import('./render.ts')).renderCommand },
  { name: 'download', group: 'project', summary: 'Download and verify the binaries into downloads/', load: async () => (await import('./download.ts')).downloadCommand },
  { name: 'build-images', group: 'project', summary: 'Build the pause, web and CoreDNS images, offline', load: async () => (await import('./build-images.ts')).buildImagesCommand },
  { name: 'lab up', group: 'machines', summary: 'Start local lab machines and write their project', load: async () => (await import('./lab.ts')).labUpCommand },
  { name: 'lab status', group: 'machines', summary: 'Show each lab machine: address, running, SSH', load: async () => (await import('./lab.ts')).labStatusCommand },
  { name: 'lab ssh', group: 'machines', summary: 'Open a shell or run a command on a lab machine', load: async () => (await import('./lab.ts')).labSshCommand },
  { name: 'lab reboot', group: 'machines', summary: 'Restart a lab machine for real (cloud-init again)', load: async () => (await import('./lab.ts')).labRebootCommand },
  { name: 'lab stop', group: 'machines', summary: 'Stop one lab machine', load: async () => (await import('./lab.ts')).labStopCommand },
  { name: 'lab start', group: 'machines', summary: 'Start a stopped lab machine', load: async () => (await import('./lab.ts')).labStartCommand },
  { name: 'lab break', group: 'machines', summary: 'Break a lab machine on purpose, for doctor to find', load: async () => (await import('./lab-break.ts')).labBreakCommand },
  { name: 'lab down', group: 'machines', summary: 'Remove a lab: its machines, overlays, bridge, mounts', load: async () => (await import('./lab.ts')).labDownCommand },
  { name: 'multipass up', group: 'machines', summary: 'Launch Multipass VMs and write their project', load: async () => (await import('./multipass.ts')).multipassUpCommand },
  { name: 'multipass status', group: 'machines', summary: 'Show each VM hardway launched: state, address, SSH', load: async () => (await import('./multipass.ts')).multipassStatusCommand },
  { name: 'multipass down', group: 'machines', summary: 'Delete the VMs hardway launched (only those)', load: async () => (await import('./multipass.ts')).multipassDownCommand },
  { name: 'up', group: 'cluster', summary: 'Everything in order: pki/, then each step below', preparesPki: true,
    // Control plane and workers are disjoint machines: their two lanes run side by side.
    steps: ['pin-hosts', 'distribute', { lanes: [['bootstrap-etcd', 'bootstrap-control-plane', 'kubelet-rbac'], UP_WORKER_LANE] }, 'routes', 'dns', 'verify'],
    examples: [
      ['hardway up --dry-run', 'show what would change in pki/ and on each machine, changing nothing'],
      ['hardway up --accept-new-host-keys', "the first run: pin each machine's host key in known_hosts"],
      ['hardway up --dir lab-demo --keep-going', 'the project in lab-demo/; after a failure, go on with the machines that did not fail'],
      ['hardway up --only routes --node node-1', 'one step on one machine'],
    ] },
  { name: 'pin-hosts', group: 'cluster', summary: "Pin every machine's name in each /etc/hosts", steps: ['pin-hosts'],
    examples: [
      ['hardway pin-hosts --dry-run', 'show the lines of /etc/hosts that would change on each machine, changing nothing'],
      ['hardway pin-hosts --node node-1', 'pin the names on node-1 only'],
      ['hardway pin-hosts --local', "also pin them in this machine's own /etc/hosts (the jumpbox)"],
    ] },
  { name: 'distribute', group: 'cluster', summary: 'Give every machine its own certificates and keys', steps: ['distribute'],
    examples: [
      ['hardway distribute --dry-run', 'list the files of pki/ each machine would get, and the services that would restart'],
      ['hardway distribute --node node-0', 'only node-0 (after "hardway certs --renew node-0")'],
    ] },
  { name: 'bootstrap-etcd', group: 'cluster', summary: 'Run etcd over TLS on the control-plane machines', steps: ['bootstrap-etcd'],
    examples: [['hardway bootstrap-etcd', 'install, configure and start etcd on every control-plane machine']] },
  { name: 'bootstrap-control-plane', group: 'cluster', summary: 'Run the API server, controller manager, scheduler', steps: ['bootstrap-control-plane', 'kubelet-rbac'],
    examples: [['hardway bootstrap-control-plane --api-timeout 300', 'the same, waiting up to 5 minutes for a slow API server']] },
  { name: 'bootstrap-workers', group: 'cluster', summary: 'Run containerd, CNI, kubelet, kube-proxy on workers', steps: WORKER_STEPS,
    examples: [
      ['hardway bootstrap-workers', 'every component on every worker'],
      ['hardway bootstrap-workers --only containerd --node node-1', 'one component on one worker'],
    ] },
  { name: 'images', group: 'cluster', summary: 'Load images/ into containerd on every worker', steps: ['images'],
    examples: [['hardway images', 'load images/*.tar (from "hardway build-images") on every worker; no registry needed']] },
  { name: 'routes', group: 'cluster', summary: "Route every worker's pod subnet via that worker", steps: ['routes'],
    examples: [['hardway routes --node node-1', 'put back the pod routes of node-1']] },
  { name: 'dns', group: 'cluster', summary: 'Run the cluster DNS (CoreDNS, the kube-dns Service)', steps: ['dns'],
    examples: [['hardway dns --ready-timeout 120', 'install CoreDNS and wait up to 2 minutes for it']] },
  { name: 'verify', group: 'cluster', summary: 'Check the whole cluster, changing nothing', steps: ['verify'],
    examples: [['hardway verify --ready-timeout 0', 'check once, without waiting for the nodes to become Ready']] },
  { name: 'smoke', group: 'cluster', summary: 'Smoke-test the cluster: a pod, logs, exec, a Service', steps: ['smoke'],
    examples: [
      ['hardway smoke', 'run the smoke test with nginx:stable (the workers must be able to pull it)'],
      ['hardway smoke --web-image localhost/hardway/web:1', 'with the offline web image of "hardway build-images"'],
    ] },
  { name: 'doctor', group: 'day-two', summary: 'Say what is wrong, most likely cause first, the fix', load: async () => (await import('./doctor.ts')).doctorCommand },
  { name: 'etcd snapshot save', group: 'day-two', summary: "Save a snapshot of the cluster's etcd here", load: async () => (await import('./etcd-snapshot.ts')).etcdSnapshotSaveCommand },
  { name: 'etcd snapshot restore', group: 'day-two', summary: 'Restore every etcd member from a snapshot', load: async () => (await import('./etcd-snapshot.ts')).etcdSnapshotRestoreCommand },
  { name: 'remove-node', group: 'day-two', summary: 'Take a worker out: drain, delete its Node, reset it', load: async () => (await import('./remove-node.ts')).removeNodeCommand },
  { name: 'reset', group: 'day-two', summary: 'Remove everything hardway installed on the machines', steps: ['reset'],
    confirm: 'removes every service, file, certificate and route hardway installed on the chosen machines',
    examples: [
      ['hardway reset --dry-run', 'list everything reset would remove, changing nothing'],
      ['hardway reset --node node-1 --yes', 'remove what hardway installed on node-1'],
      ['hardway reset --yes --delete-data etcd --local', "everything, etcd's data too, and the names in this machine's /etc/hosts"],
    ] },
];

/** The remote command of this name (for tests and tools that run one directly). */
export function remoteEntry(name: string): RemoteCommandEntry {
  const entry = COMMANDS.find((c) => c.name === name);
  if (!entry || !isRemote(entry)) throw new Error(`no remote command "${name}"`);
  return entry;
}

/** Loads the CLI command of an entry. */
export async function loadCommand(entry: CommandEntry): Promise<CliCommand> {
  return isRemote(entry) ? (await import('./remote.ts')).remoteCommand(entry) : { ...(await entry.load()), summary: entry.summary };
}
