// What hardway puts on a machine, derived from what the steps install rather than kept as a list
// of its own: every whole file rendered for the machine (configs and units, each owned by a step),
// every pki/ placement (distribute), the binaries download's table gives the machine's role, and
// the CNI plugins. Beside them, the runtime data the installed services write themselves (the only
// hand-kept part: no step installs it). `hardway reset` removes exactly this. Pure.
import { dirname } from 'node:path';
import { BINARY_DIRS, REQUIRED_CNI_PLUGINS } from '../../download/layout.ts';
import type { Inventory, Machine } from '../../inventory.ts';
import { ANY, SERVER, WORKER } from '../../layout.ts';
import { renderMachine } from '../../render/machine.ts';
import { placements } from './placements.ts';

/** hardway's own directory on every machine: the SHA cache, restart-due marks, image archives, its records. */
export const HARDWAY_DIR = '/var/lib/hardway';

/** Packages worker-os installed (the named ones and what apt pulled in with them), one per line. */
export const PACKAGES_RECORD = `${HARDWAY_DIR}/packages-installed`;

/** Written when worker-os masked swap.target, so reset unmasks only a mask hardway made. */
export const SWAP_MASK_RECORD = `${HARDWAY_DIR}/swap.target.masked`;

/** The end worker-os gives a swap line of /etc/fstab it comments out (reset puts the line back). */
export const FSTAB_SWAP_NOTE = ' # swap disabled by hardway: the kubelet needs swap off';

/** containerd's state: its content is removed, the directory itself may be a mount point (the lab's). */
export const CONTAINERD_STATE = '/var/lib/containerd';

/** etcd's data: the cluster's whole state, removed only when asked for by name (`--delete-data etcd`). */
export const ETCD_DATA = SERVER.etcdDataDir;

/**
 * What the services hardway runs write at run time, removed whole (after their mounts are gone).
 * Workers: the kubelet's and kube-proxy's directories, the CNI plugins' IP allocations, the pod logs,
 * containerd's runtime state and plugin directory. Control plane: nothing but the audit log (named
 * in AUDIT_LOGS). Both: hardway's own directory.
 */
const RUNTIME_DATA: Record<Machine['role'], string[]> = {
  worker: [WORKER.kubeletDir, dirname(WORKER.kubeProxyConfig), '/var/lib/cni', '/var/log/pods', '/var/log/containers', '/run/containerd', '/opt/containerd', HARDWAY_DIR],
  'control-plane': [SERVER.auditLog, HARDWAY_DIR],
};

/** Directories that are the OS's, never removed even when hardway's files were their last entries. */
const OS_DIRS = new Set(['/', '/etc', '/etc/systemd', ANY.units, '/etc/sysctl.d', '/etc/modules-load.d', '/usr', '/usr/local', SERVER.bin, '/var', '/var/lib', '/var/log', '/opt', '/run']);

/** What hardway installs on one machine, as reset removes it. */
export interface Installed {
  /** Every file (binaries, configs, units, certificates, keys, kubeconfigs). */
  files: string[];
  /** The services of the units among `files`, in the order to stop them (the reverse of install order). */
  services: string[];
  /** Runtime data removed whole. */
  data: string[];
  /** Directories the files and data leave behind, deepest first: removed when nothing else is in them. */
  dirs: string[];
}

/**
 * What hardway installs on `machine`. `cniPlugins`: the plugin names in downloads/cni-plugins (the
 * cni step installs every one); the required ones count even when downloads/ is gone.
 */
export function installedOn(inv: Inventory, machine: Machine, cniPlugins: readonly string[] = []): Installed {
  const rendered = renderMachine(inv, machine).filter((f) => f.mergeInto === undefined).map((f) => f.path);
  // The routes unit counts on every machine: one that needs no route now may have had one; the
  // scheduled snapshots' files on every control plane, as etcd.snapshots may have been set before.
  const snapshots = machine.role === 'control-plane' ? [SERVER.etcdSnapshotScript, SERVER.etcdSnapshotService, SERVER.etcdSnapshotTimer] : [];
  const all = [...new Set([...rendered, ANY.routesUnit, ...snapshots])];
  // A timer is stopped like a service (before the service it starts: the reverse of install order).
  const units = all.filter((p) => p.startsWith(`${ANY.units}/`) && (p.endsWith('.service') || p.endsWith('.timer')));
  const binaries = Object.entries(BINARY_DIRS).filter(([, dir]) => (machine.role === 'worker') === (dir === 'worker')).map(([name]) => `${SERVER.bin}/${name}`);
  const plugins = machine.role === 'worker' ? [...new Set([...REQUIRED_CNI_PLUGINS, ...cniPlugins])].map((p) => `${WORKER.cniBin}/${p}`) : [];
  const files = [...new Set([...all, ...placements(inv, machine).map((p) => p.to), ...binaries, ...plugins])];
  const data = RUNTIME_DATA[machine.role];
  // A directory inside the data goes with it.
  const dirs = leftDirs(files).filter((d) => !data.some((x) => d === x || d.startsWith(`${x}/`)));
  return { files, services: units.map(serviceOf).reverse(), data, dirs };
}

/** `/etc/systemd/system/kubelet.service` -> `kubelet` (a timer keeps its kind: `x.timer`). */
function serviceOf(unit: string): string {
  return unit.slice(ANY.units.length + 1).replace(/\.service$/, '');
}

/** Every parent directory of `paths` up to the OS's own, deepest first. */
function leftDirs(paths: string[]): string[] {
  const dirs = new Set<string>();
  for (const p of paths) {
    for (let d = dirname(p); !OS_DIRS.has(d) && !dirs.has(d); d = dirname(d)) dirs.add(d);
  }
  return [...dirs].sort((a, b) => b.split('/').length - a.split('/').length || a.localeCompare(b));
}
