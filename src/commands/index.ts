// The one command table: every command hardway offers, its summary and the heading it is listed
// under; a command that works on the machines comes from src/command-table.ts (its steps, lanes,
// examples). Commands load lazily so that --help and one command stay fast.
import type { CliCommand } from '../cli/command.ts';
import { isRemote, type CommandEntry, type CommandGroup } from '../cli/entry.ts';
import { remoteEntry } from '../command-table.ts';

export { isRemote, type CommandEntry, type CommandGroup, type RemoteCommandEntry } from '../cli/entry.ts';

const remote = remoteEntry;

/** The headings of the top-level help, in the order a newcomer needs them (the 'other' commands follow them, with help). */
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
  remote('up'),
  remote('pin-hosts'),
  remote('distribute'),
  remote('bootstrap-etcd'),
  remote('bootstrap-control-plane'),
  remote('bootstrap-workers'),
  remote('images'),
  remote('routes'),
  remote('dns'),
  remote('verify'),
  remote('smoke'),
  { name: 'doctor', group: 'day-two', summary: 'Say what is wrong, most likely cause first, the fix', load: async () => (await import('./doctor.ts')).doctorCommand },
  { name: 'etcd snapshot save', group: 'day-two', summary: "Save a snapshot of the cluster's etcd here", load: async () => (await import('./etcd-snapshot.ts')).etcdSnapshotSaveCommand },
  { name: 'etcd snapshot list', group: 'day-two', summary: 'List the scheduled etcd snapshots (etcd.snapshots)', load: async () => (await import('./etcd-snapshot-scheduled.ts')).etcdSnapshotListCommand },
  { name: 'etcd snapshot fetch', group: 'day-two', summary: 'Copy a scheduled etcd snapshot to backups/ here', load: async () => (await import('./etcd-snapshot-scheduled.ts')).etcdSnapshotFetchCommand },
  { name: 'etcd snapshot restore', group: 'day-two', summary: 'Restore every etcd member from a snapshot', load: async () => (await import('./etcd-snapshot.ts')).etcdSnapshotRestoreCommand },
  remote('remove-node'),
  remote('reset'),
  { name: 'version', group: 'other', summary: 'print the version (also --version, -V)', load: async () => (await import('./version.ts')).versionCommand },
];

export { remoteEntry };

/** Loads the CLI command of an entry. */
export async function loadCommand(entry: CommandEntry): Promise<CliCommand> {
  return isRemote(entry) ? (await import('./remote.ts')).remoteCommand(entry) : { ...(await entry.load()), summary: entry.summary };
}
