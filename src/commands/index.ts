// The one command table: every command hardway offers, its summary, and for a command that works on
// the machines its steps (with the lanes that run side by side) and whether it first makes pki/.
// Commands load lazily so that --help and one command stay fast.
import type { CliCommand } from '../cli/command.ts';
import { isRemote, type CommandEntry } from './entry.ts';
import { remoteEntry } from '../command-table.ts';

export { isRemote, type CommandEntry, type RemoteCommandEntry } from './entry.ts';

const remote = remoteEntry;

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
  remote('pin-hosts'),
  remote('distribute'),
  remote('bootstrap-etcd'),
  remote('bootstrap-control-plane'),
  remote('bootstrap-workers'),
  remote('images'),
  remote('routes'),
  remote('dns'),
  remote('verify'),
  { name: 'doctor', summary: 'Explain what is wrong, most likely cause first, and the command that fixes it (read-only)', load: async () => (await import('./doctor.ts')).doctorCommand },
  { name: 'etcd snapshot save', summary: "Save a snapshot of the cluster's etcd on the jumpbox (0600, verified with etcdctl snapshot status)", load: async () => (await import('./etcd-snapshot.ts')).etcdSnapshotSaveCommand },
  { name: 'etcd snapshot restore', summary: 'Restore every etcd member from a snapshot (stops the control plane and etcd, restores, starts them)', load: async () => (await import('./etcd-snapshot.ts')).etcdSnapshotRestoreCommand },
  remote('smoke'),
  remote('reset'),
  remote('remove-node'),
  remote('up'),
];

export { remoteEntry };

/** Loads the CLI command of an entry. */
export async function loadCommand(entry: CommandEntry): Promise<CliCommand> {
  return isRemote(entry) ? (await import('./remote.ts')).remoteCommand(entry) : entry.load();
}
