// reset: removes from each machine everything hardway installed there, and nothing else. What that
// is comes from what the steps install (support/installed.ts: the rendered files with their owning
// step, the pki/ placements, the role's binaries and the CNI plugins) plus the runtime data of the
// services they run; what is there of it is read in one facts batch, and the plan
// (support/reset-plan.ts) removes only that, so a second run plans nothing and --dry-run lists it
// all. etcd's data stays unless asked for by name (`--delete-data etcd`). Packages, the swap mask
// and fstab lines go back only where worker-os recorded that it changed them; the hostname and the
// running sysctls stay as they are (a reboot reads the sysctl files, which are gone).
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { downloadsDir } from '../download/layout.ts';
import type { Answers, FactRequest, FileFact, ProbeResult } from '../engine/facts.ts';
import type { Change, ChangeStep, HostContext, StepContext } from '../engine/types.ts';
import { ANY, SERVER } from '../layout.ts';
import { sh } from '../shell.ts';
import { CNI_BRIDGE } from './cni.ts';
import { flagOption, listOption } from './options.ts';
import { TEMPLATE_FAMILIES } from './pin-hosts-text.ts';
import { CONTAINERD_STATE, ETCD_DATA, FSTAB_SWAP_NOTE, installedOn, PACKAGES_RECORD, SWAP_MASK_RECORD, type Installed } from './support/installed.ts';
import { KUBE_RULES, resetChanges, withoutBlock, type ResetFacts } from './support/reset-plan.ts';
import { markedRegistryDirs } from '../probes/containerd.ts';
import { filterTable, iptablesRuleCount, linkExists, netnsNames, routes } from '../probes/network.ts';
import { POD_FORWARD_CHAIN, POD_FORWARD_JUMP } from '../net/pod-forwarding.ts';
import { dirEntries, dirNames, fstabLinesWith, installedPackages, mountPoints, pathsPresent } from '../probes/system.ts';
import { serviceStates } from '../probes/systemd.ts';

/** The reset step. */
export const resetStep: ChangeStep = {
  name: 'reset',
  title: 'Remove everything hardway installed: services, files, certificates, data, routes, the hosts block',
  // Leaving machines only, when some leave the cluster (remove-node): the others stay as they are.
  targets: (inv) => inv.leaving ?? inv.machines,
  async plan(ctx: StepContext): Promise<Change[]> {
    const { inventory, machine } = ctx;
    const installed = installedOn(inventory, machine, cniPluginNames(inventory.dir));
    const facts = await readResetFacts(ctx, installed);
    const { changes, notes } = resetChanges(inventory, installed, facts, { deleteEtcdData: listOption(ctx.options, 'delete-data').includes('etcd') });
    for (const n of notes) ctx.log.info(n);
    return changes;
  },
  jumpbox: {
    // The jumpbox's own names of the cluster stay when only some machines leave it.
    when: (options, inv) => flagOption(options, 'local') && inv.leaving === undefined,
    plan: planJumpbox,
  },
};

/** The CNI plugins the cni step installs: every file in downloads/cni-plugins (none when downloads/ is gone). */
function cniPluginNames(projectDir: string): string[] {
  const dir = join(downloadsDir(projectDir), 'cni-plugins');
  return existsSync(dir) ? readdirSync(dir).filter((n) => !n.startsWith('.')) : [];
}

/** The hosts files pin-hosts edits: /etc/hosts and every family's cloud-init template. */
const HOSTS_FILES = [ANY.hosts, ...TEMPLATE_FAMILIES.map(ANY.cloudHostsTemplate)];

/** Everything the plan reads, in one round trip (a second only when worker-os recorded packages). */
async function readResetFacts(ctx: StepContext, installed: Installed): Promise<ResetFacts> {
  const { machine, facts } = ctx;
  const { services } = installed;
  const paths = [...installed.files, ...installed.data, ...installed.dirs];
  const worker = machine.role === 'worker';
  const auditDir = SERVER.auditLog.slice(0, SERVER.auditLog.lastIndexOf('/'));
  const probes = {
    present: pathsPresent.ask([...paths, ETCD_DATA, SWAP_MASK_RECORD, CONTAINERD_STATE]),
    mounts: mountPoints.ask(),
    routes: routes.ask(),
    netns: netnsNames.ask(),
    bridge: linkExists.ask(CNI_BRIDGE),
    v4: iptablesRuleCount.ask('v4', KUBE_RULES),
    v6: iptablesRuleCount.ask('v6', KUBE_RULES),
    entries: dirEntries.ask(installed.dirs),
    containerd: dirNames.ask(CONTAINERD_STATE),
    containerdPackage: installedPackages.ask(['containerd']),
    audit: dirNames.ask(auditDir),
    fstab: fstabLinesWith.ask(FSTAB_SWAP_NOTE),
    ...(worker ? { registryDirs: markedRegistryDirs.ask(), filter: filterTable.ask() } : {}),
  };
  const states = serviceStates.ask(services);
  const keys = Object.keys(probes) as (keyof typeof probes)[];
  const requests: FactRequest[] = [
    ...HOSTS_FILES.map((path) => ({ op: 'R' as const, path })),
    { op: 'R', path: PACKAGES_RECORD },
    states,
    ...keys.map((k) => probes[k]!),
  ];
  const answers = await facts.batch(requests);
  const hostsFiles = answers.slice(0, HOSTS_FILES.length) as FileFact[];
  const record = answers[HOSTS_FILES.length] as FileFact;
  const answer = (i: number) => answers[HOSTS_FILES.length + i] as ProbeResult;
  const p = Object.fromEntries(keys.map((k, i) => [k, probes[k]!.parse(answer(2 + i))])) as Answers<typeof probes>;
  const auditBase = SERVER.auditLog.slice(auditDir.length + 1).replace(/\.log$/, '');
  return {
    present: p.present,
    services: states.parse(answer(1)),
    mounts: p.mounts.map(unescapeMount),
    routes: p.routes,
    netns: p.netns,
    bridge: p.bridge,
    kubeRules: { v4: p.v4, v6: p.v6 },
    entries: p.entries,
    containerdContent: p.containerd.length > 0,
    containerdPackage: p.containerdPackage.has('containerd'),
    auditLogs: p.audit.filter((n) => n.startsWith(`${auditBase}-`) && n.endsWith('.log')).map((n) => `${auditDir}/${n}`),
    hostsFiles,
    fstabNotes: p.fstab,
    packages: await stillInstalled(ctx, record),
    ...(p.registryDirs ? { registryDirs: p.registryDirs } : {}),
    ...(p.filter ? { podForward: { chain: p.filter.chains.has(POD_FORWARD_CHAIN), jumps: (p.filter.chains.get('FORWARD') ?? []).filter((r) => r === POD_FORWARD_JUMP).length } } : {}),
  };
}

/** The packages of worker-os' record that are still installed (asked only when there is a record). */
async function stillInstalled(ctx: StepContext, record: FileFact): Promise<string[]> {
  const named = (record.content?.toString('utf8') ?? '').split('\n').map((l) => l.trim()).filter((l) => /^[a-z0-9][a-z0-9+.-]*$/.test(l));
  if (named.length === 0) return [];
  const { q } = await ctx.facts.ask({ q: installedPackages.ask(named) });
  return named.filter((n) => q.has(n));
}

/** /proc/self/mounts writes a space in a path as \040 (and a tab, newline, backslash alike). */
function unescapeMount(path: string): string {
  return path.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)));
}

/** With --local: the block out of the jumpbox's own /etc/hosts. */
async function planJumpbox(ctx: HostContext): Promise<Change[]> {
  return withoutBlock((await ctx.facts.read([ANY.hosts])).get(ANY.hosts)!);
}
