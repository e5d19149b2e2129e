// The plan of `hardway reset` as a pure function: what one machine holds of what hardway installed
// (read in one facts batch by src/steps/reset.ts) in, the commands that remove it out, in the order
// they must run: services stopped (the kubelet before the pods, the pods before containerd), the pod
// network and the mounts taken down, the routes, files, data and directories removed, systemd told,
// the hosts block taken out, and what worker-os changed in the OS put back where it recorded it.
// Only what is there is planned, so a machine already reset plans nothing.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { changesForFile } from '../../engine/desired.ts';
import type { FileFact, ProbeResult } from '../../engine/facts.ts';
import type { Change, ExecChange } from '../../engine/types.ts';
import type { Inventory } from '../../inventory.ts';
import { ANY, HOSTS_MARKERS, WORKER } from '../../layout.ts';
import { removeMarkedBlock } from '../../render/marked-block.ts';
import { PACKAGE_ROOT } from '../../render/templates.ts';
import { joinCommands, sh, shellProgram, type Command } from '../../shell.ts';
import { CNI_BRIDGE } from '../cni.ts';
import { asOneCommand, routeChanges } from '../routes.ts';
import type { ServiceState } from './inspect.ts';
import { CONTAINERD_STATE, ETCD_DATA, FSTAB_SWAP_NOTE, SWAP_MASK_RECORD as SWAP_MASK, type Installed } from './installed.ts';
import { staleRegistryChanges } from './registry-dirs.ts';
import type { LiveRoute } from '../../probes/network.ts';
import { POD_FORWARD_CHAIN } from '../../net/pod-forwarding.ts';

/**
 * Stops every pod and container while containerd runs: a shell program in a file of its own, its
 * comment lines left out of what runs (and of what --dry-run shows).
 */
export const STOP_PODS: Command = shellProgram(readFileSync(join(PACKAGE_ROOT, 'src/steps/reset-pods.sh'), 'utf8').replace(/^#.*\n/gm, ''));

/** Chains and rules of the kubelet, kube-proxy and the CNI bridge plugin (`iptables-save` lines). */
export const KUBE_RULES = '^:(KUBE|CNI)-|^-A (KUBE|CNI)-|-j (KUBE|CNI)-';

/** Where run-time mounts of the pods live: unmounted (deepest first) before their directories go. */
const MOUNT_ROOTS = [WORKER.kubeletDir, '/run/containerd', CONTAINERD_STATE];

/** What one machine holds, as reset's facts batch read it. */
export interface ResetFacts {
  /** Which of the installed paths (files, data, directories, records) exist. */
  present: Set<string>;
  services: Map<string, ServiceState>;
  /** Mount points (from /proc/self/mounts). */
  mounts: string[];
  routes: LiveRoute[];
  /** Network namespaces (`ip netns list`, names only). */
  netns: string[];
  /** Whether the CNI bridge exists. */
  bridge: boolean;
  /** Lines of `iptables-save` / `ip6tables-save` that KUBE_RULES matches. */
  kubeRules: { v4: number; v6: number };
  /** The entries of every installed directory that exists (full paths). */
  entries: string[];
  /** containerd's state directory has content. */
  containerdContent: boolean;
  /** Debian's containerd package is installed (it uses containerd's state directory too). */
  containerdPackage: boolean;
  /** Rotated audit logs beside the API server's audit log. */
  auditLogs: string[];
  /** /etc/hosts and cloud-init's hosts templates, read (absent ones included). */
  hostsFiles: FileFact[];
  /** Swap lines of /etc/fstab that worker-os commented out. */
  fstabNotes: number;
  /** Packages worker-os recorded as installed by it that are still installed. */
  packages: string[];
  /** MARKED_REGISTRY_DIRS_PROBE's answer (workers). */
  registryDirs?: ProbeResult;
  /** The pod-forwarding step's chain (whether it exists) and FORWARD's jumps to it (workers). */
  podForward?: { chain: boolean; jumps: number };
}

/** Debian's own haproxy config, which the api-proxy step leaves alone. */
const API_PROXY_HOST_CONFIG = '/etc/haproxy/haproxy.cfg';

/** What the user asked for beyond the default. */
export interface ResetChoices {
  /** `--delete-data etcd`: remove etcd's data too. */
  deleteEtcdData: boolean;
}


const RUNNING = new Set(['active', 'activating', 'reloading', 'deactivating']);

/** The changes that remove what hardway installed on the machine, in order; notes say what is kept. */
export function resetChanges(inv: Inventory, installed: Installed, f: ResetFacts, choices: ResetChoices): { changes: Change[]; notes: string[] } {
  const changes: Change[] = [];
  const notes: string[] = [];
  const exec = (cmd: Command, reason: string) => changes.push({ kind: 'exec', cmd, reason });
  const worker = installed.services.includes('containerd');

  // Routes to other workers' pods first: the routes unit deletes them when it stops, and `ip route
  // del` fails on a route already gone (the unit's file goes with the other files).
  const routes = routeChanges(f.routes, [], inv.settings.clusterCidr);
  const gone = routes.map((c) => (c.kind === 'exec' ? c.cmd.text.replace(/^ip route del /, '') : ''));
  changes.push(...asOneCommand(routes).map((c) => ({ ...c, reason: `routes to other workers' pods: ${gone.join(', ')}` })));
  // The pod forwarding rules likewise, before their unit stops (its stop ignores what is gone).
  const fwd = f.podForward;
  if (fwd && (fwd.chain || fwd.jumps > 0)) {
    const cmds = [...Array.from({ length: fwd.jumps }, () => sh`iptables -w -D FORWARD -j ${POD_FORWARD_CHAIN}`), ...(fwd.chain ? [sh`iptables -w -F ${POD_FORWARD_CHAIN}`, sh`iptables -w -X ${POD_FORWARD_CHAIN}`] : [])];
    exec(joinCommands(cmds), `the pod forwarding chain ${POD_FORWARD_CHAIN} and FORWARD's jump to it (other rules stay)`);
  }

  // Services: everything but containerd first, then the pods it still runs, then containerd.
  changes.push(...stopServices(installed.services.filter((s) => s !== 'containerd'), f));
  if (worker && RUNNING.has(f.services.get('containerd')?.active ?? '')) exec(STOP_PODS, 'stop every pod and container containerd runs (the kubelet is stopped, so none comes back)');
  changes.push(...stopServices(['containerd'], f));

  // The pod network: namespaces, the bridge, the kubelet's, kube-proxy's and the CNI plugin's rules.
  const netns = f.netns.filter((n) => n.startsWith('cni-'));
  if (netns.length) exec(joinCommands(netns.map((n) => sh`ip netns delete ${n}`)), `pod network namespaces: ${netns.join(', ')}`);
  if (f.bridge) exec(sh`ip link delete ${CNI_BRIDGE}`, `the CNI bridge ${CNI_BRIDGE}`);
  if (f.kubeRules.v4) exec(sh`iptables-save | grep -vE ${KUBE_RULES} | iptables-restore`, `${f.kubeRules.v4} iptables chains and rules of the kubelet, kube-proxy and the CNI plugin (KUBE-*, CNI-*); other rules stay`);
  if (f.kubeRules.v6) exec(sh`ip6tables-save | grep -vE ${KUBE_RULES} | ip6tables-restore`, `${f.kubeRules.v6} ip6tables chains and rules of the kubelet and kube-proxy (KUBE-*); other rules stay`);
  const mounts = f.mounts.filter((m) => MOUNT_ROOTS.some((r) => m.startsWith(`${r}/`))).sort((a, b) => b.length - a.length);
  // Deleting a task unmounts its root filesystem itself, so a mount may be gone by now.
  if (mounts.length) exec(sh`for m in ${mounts}; do if mountpoint -q "$m"; then umount "$m" || exit 1; fi; done`, 'mounts of pods and containers');

  // Files, registry directories hardway marked, data, then the directories they leave empty.
  const files = installed.files.filter((p) => f.present.has(p));
  if (files.length) exec(sh`rm -f -- ${files}`, 'binaries, configs, units, certificates, keys and kubeconfigs hardway installed');
  const registries = f.registryDirs ? staleRegistryChanges(f.registryDirs, []) : [];
  changes.push(...registries);
  const data = [...installed.data.filter((p) => f.present.has(p)), ...f.auditLogs];
  if (f.present.has(ETCD_DATA)) {
    if (choices.deleteEtcdData) data.push(ETCD_DATA);
    else notes.push(`kept ${ETCD_DATA} (etcd's data: the whole cluster state); "--delete-data etcd" removes it`);
  }
  if (data.length) exec(sh`rm -rf --one-file-system -- ${data}`, `data the services wrote: ${data.join(', ')}${data.includes(ETCD_DATA) ? ' (etcd data: asked for with --delete-data etcd)' : ''}`);
  if (f.containerdContent) {
    if (f.containerdPackage) notes.push(`kept ${CONTAINERD_STATE}: Debian's containerd package is installed and keeps its state there too`);
    else if (f.mounts.includes(CONTAINERD_STATE)) exec(sh`find ${CONTAINERD_STATE} -mindepth 1 -maxdepth 1 -exec rm -rf --one-file-system {} +`, `containerd's images, snapshots and metadata (${CONTAINERD_STATE} itself is a mount point and stays)`);
    else exec(sh`rm -rf --one-file-system -- ${CONTAINERD_STATE}`, "containerd's images, snapshots and metadata");
  }
  const removed = new Set([...files, ...data, ...registries.flatMap(removedPaths), CONTAINERD_STATE]);
  const dirs = emptiedDirs(installed.dirs.filter((d) => f.present.has(d)), f.entries, removed);
  if (dirs.length) exec(sh`rmdir -- ${dirs}`, 'directories hardway made, now empty');

  // systemd: the swap mask worker-os made, then forget the removed units.
  if (f.present.has(SWAP_MASK)) exec(sh`systemctl unmask --no-reload swap.target`, 'worker-os masked swap.target');
  const units = installed.services.filter((s) => f.present.has(unitFile(s)) || f.services.get(s)?.loaded);
  if (units.length) exec(sh`systemctl daemon-reload && { systemctl reset-failed ${units} 2>/dev/null || true; }`, `systemd forgets ${units.join(', ')}`);
  else if (f.present.has(SWAP_MASK)) exec(sh`systemctl daemon-reload`, 'systemd forgets the swap mask');
  // haproxy is Debian's service: without hardway's drop-in (gone above, systemd reloaded) it runs
  // the machine's own /etc/haproxy/haproxy.cfg again, or stops if that config cannot start.
  if (files.includes(WORKER.apiProxyDropIn)) {
    exec(sh`systemctl try-restart haproxy || systemctl stop haproxy`, `haproxy back on ${API_PROXY_HOST_CONFIG}, which hardway never changed (stopped if that does not start)`);
  }

  // The hosts block, from /etc/hosts and cloud-init's templates (every other line stays).
  for (const file of f.hostsFiles) changes.push(...withoutBlock(file));

  // What worker-os changed in the OS and recorded.
  if (f.fstabNotes) exec(sh`sed -i -E ${`s/^# (.*)${FSTAB_SWAP_NOTE}$/\\1/`} /etc/fstab`, `${f.fstabNotes} swap line(s) of /etc/fstab that worker-os commented out (swap comes back at the next boot)`);
  if (f.packages.length) exec(sh`DEBIAN_FRONTEND=noninteractive dpkg --purge ${f.packages}`, `packages worker-os installed: ${f.packages.join(', ')}`);
  return { changes, notes };
}

/** `systemctl disable --now` for the services with a unit file; `systemctl stop` for one running without. */
function stopServices(services: string[], f: ResetFacts): ExecChange[] {
  const withUnit = services.filter((s) => f.present.has(unitFile(s)));
  const orphans = services.filter((s) => !withUnit.includes(s) && RUNNING.has(f.services.get(s)?.active ?? ''));
  const out: ExecChange[] = [];
  if (withUnit.length) out.push({ kind: 'exec', cmd: sh`systemctl disable --now ${withUnit}`, reason: `stop and disable ${withUnit.join(', ')}` });
  if (orphans.length) out.push({ kind: 'exec', cmd: sh`systemctl stop ${orphans}`, reason: `${orphans.join(', ')} still running without a unit file` });
  return out;
}

function unitFile(service: string): string {
  return service.includes('.') ? `${ANY.units}/${service}` : `${ANY.units}/${service}.service`;
}

/** The directories (deepest first) that hold nothing once `removed` and the emptied ones below are gone. */
export function emptiedDirs(dirs: string[], entries: string[], removed: Set<string>): string[] {
  const gone = new Set(removed);
  const out: string[] = [];
  for (const d of dirs) {
    // Removed whole by an earlier change (rm -rf of a marked registry directory): rmdir would fail.
    if (removed.has(d) || [...removed].some((g) => d.startsWith(`${g}/`))) continue;
    const inside = entries.filter((e) => e.startsWith(`${d}/`) && !e.slice(d.length + 1).includes('/'));
    if (inside.every((e) => gone.has(e) || [...gone].some((g) => e.startsWith(`${g}/`)))) {
      out.push(d);
      gone.add(d);
    }
  }
  return out;
}

/** The paths an `rm -rf -- PATH...` change of staleRegistryChanges removes. */
function removedPaths(c: ExecChange): string[] {
  const m = /^rm -r?f -- (.+)$/.exec(c.cmd.text);
  return m ? m[1]!.split(' ') : [];
}

/** The put that takes the hosts block out of a file that has it (mode and owner as they are). */
export function withoutBlock(file: FileFact): Change[] {
  if (!file.exists || file.notFile || !file.content) return [];
  const now = file.content.toString('utf8');
  const marker = (l: string) => l.trimEnd() === HOSTS_MARKERS.begin || l.trimEnd() === HOSTS_MARKERS.end;
  if (!now.split('\n').some(marker)) return [];
  const want = removeMarkedBlock(now, HOSTS_MARKERS);
  if (want === now) return [];
  const sha256 = createHash('sha256').update(file.content).digest('hex');
  return changesForFile({ path: file.path, content: Buffer.from(want), mode: file.mode! & 0o7777, owner: file.owner! }, { ...file, sha256 })
    .map((c) => ({ ...c, reason: "take out hardway's hosts block (every other line stays)" }));
}
