// The machine itself: does it answer, are its services active, do the cluster's names resolve there
// (and will they after the next boot), is its CNI config what hardway installs. Pure.
import type { Machine } from '../../inventory.ts';
import { WORKER } from '../../layout.ts';
import { hostsBlock } from '../../render/hosts.ts';
import { cloudInitFacts } from '../../steps/pin-hosts-text.ts';
import { journalsOfDown, serviceStates, type ServiceState } from '../../probes/systemd.ts';
import { listeners } from '../../probes/system.ts';
import { componentPorts } from '../../steps/preflight/checks.ts';
import { cloudConfigKeys, hostsTemplateBlocks, namesResolved } from '../../probes/names.ts';
import { serviceFix, stepsFix, unreachableFix } from '../fixes.ts';
import { servicesOf } from '../probes.ts';
import type { DoctorContext, MachineEvidence } from '../types.ts';
import { doctorCheck, sameMachine, stdoutOf, type AskOf, type Found, type MachineAnswers } from './check.ts';

/** The machine did not answer over SSH (or refused us): the one finding about it. */
export const ssh = doctorCheck({
  name: 'ssh',
  rank: 10,
  looks: "each machine answers over SSH (its host key pinned in known_hosts, an SSH key accepted) and runs doctor's read-only batch",
  unreachable: (ctx, m, u) => sshFindings(ctx, m, { machine: m.hostname, unreachable: u, probes: {}, files: {} }),
  explains: { node: sameMachine },
});

/** The machine did not answer over SSH (or refused us): the one finding about it. */
export function sshFindings(ctx: DoctorContext, m: Machine, ev: MachineEvidence): Found[] {
  const u = ev.unreachable;
  if (!u) return [];
  const running = ctx.lab && !ctx.lab.running.includes(m.hostname) ? ` (lab machine ${m.hostname} is not running)` : '';
  const cause = {
    connect: `${m.hostname} does not answer over SSH${running}`,
    'host-key': `${m.hostname} presents a host key that known_hosts does not pin; nothing was asked of it`,
    auth: `${m.hostname} refuses the SSH key; nothing was asked of it`,
    'no-key': `hardway had no SSH key to offer ${m.hostname} (no -i, no ssh.identityFile, no ~/.ssh/id_* and no ssh-agent); nothing was asked of it`,
    facts: `${m.hostname} answers over SSH but doctor's read-only batch failed there`,
  }[u.kind];
  const fix = u.kind === 'connect' ? unreachableFix(ctx, m.hostname) : null;
  return [{ machine: m.hostname, cause: u.hint ? `${cause}; ${u.hint}` : cause, evidence: `ssh ${m.ip}: ${u.message}`, fix }];
}

/** The service probes every service check asks: the states of the machine's services, and the journal of those down. */
export const serviceProbes = ({ machine }: AskOf) => ({ services: serviceStates.ask(servicesOf(machine)), journal: journalsOfDown.ask(servicesOf(machine)) });

/** The services expected on `m` that are not active, by their states. */
function downOf(m: Machine, a: MachineAnswers<ReturnType<typeof serviceProbes>>): { down: string[]; states: Map<string, ServiceState>; journals: Map<string, string[]> } {
  const states = a.services ?? new Map<string, ServiceState>();
  return { down: servicesOf(m).filter((s) => states.get(s)?.active !== 'active'), states, journals: parseJournals(stdoutOf(a.journal)) };
}

/**
 * The finding of one service that is not active, with the journal's last line. The kubelet's unit
 * requires containerd's: a stopped containerd takes the kubelet with it, and starting containerd
 * alone does not bring it back. One finding, one fix for both (containerd's).
 */
export function serviceDown(m: Machine, s: string, a: MachineAnswers<ReturnType<typeof serviceProbes>>): Found[] {
  const { down, states, journals } = downOf(m, a);
  if (!down.includes(s)) return [];
  const withKubelet = down.includes('containerd') && down.includes('kubelet');
  if (withKubelet && s === 'kubelet') return [];
  const state = states.get(s);
  const active = state?.loaded === false ? 'not installed (no unit)' : state?.active || 'unknown';
  const last = journals.get(s)?.at(-1);
  const both = withKubelet && s === 'containerd';
  return [{
    machine: m.hostname,
    cause: `${s} is ${active} on ${m.hostname}` + (both ? ', and the kubelet, whose unit requires it, stopped with it' : ''),
    evidence: `systemctl show ${s}: ActiveState=${state?.active || '?'}` + (last ? `; journalctl -u ${s}: ${last}` : '') +
      (both ? `; systemctl show kubelet: ActiveState=${states.get('kubelet')?.active || '?'}` : ''),
    fix: both ? stepsFix(['containerd', 'kubelet'], m.hostname) : serviceFix(s, m.hostname),
    about: { kind: `service ${s}` },
  }];
}

/** A component's service is not active and another program holds its port (the service's finding is told in this one). */
export const ports = doctorCheck({
  name: 'ports',
  rank: 15,
  looks: 'the port of a component that is not active (the API server, etcd, the kubelet): held by another program (ss)',
  asks: (q) => ({ ...serviceProbes(q), listening: listeners.ask() }),
  judge: ({ ctx, machine: m, answers }): Found[] => {
    const held = answers.listening;
    const states = answers.services;
    // No ss there (or no answer): nothing to judge by.
    if (!held || !states) return [];
    return componentPorts(ctx.inventory, m).flatMap(({ port, owner }): Found[] => {
      const holders = held.get(port);
      const state = states.get(owner)?.active;
      if (!holders || holders.includes(owner) || state === 'active') return [];
      const who = holders.join(', ') || 'a program ss cannot name';
      return [{
        machine: m.hostname, fix: null, about: { kind: `port ${owner}` },
        cause: `port ${port} on ${m.hostname}, where ${owner} listens, is held by ${who}: ${owner} cannot start (${state || 'unknown'}); stop that program or move it to another port`,
        evidence: `ss -Hltnp: port ${port} held by ${who}`,
      }];
    });
  },
  explains: {
    // The finding of the service whose port is taken.
    'control-plane': (mine, theirs) => mine.machine === theirs.machine && theirs.about?.kind === `service ${mine.about!.kind!.slice(5)}`,
    kubelet: (mine, theirs) => mine.machine === theirs.machine && theirs.about?.kind === `service ${mine.about!.kind!.slice(5)}`,
    node: sameMachine,
  },
});

/** etcd and the control plane's services, each one not active. */
export const controlPlane = doctorCheck({
  name: 'control-plane',
  rank: 20,
  looks: "etcd and the control plane's services are active on each control-plane machine (the journal's last line when not)",
  asks: serviceProbes,
  judge: ({ machine, answers }) => (machine.role === 'control-plane' ? servicesOf(machine).flatMap((s) => serviceDown(machine, s, answers)) : []),
  explains: { node: sameMachine },
});

/** A worker's kubelet not active (containerd's finding speaks for it when containerd stopped too). */
export const kubelet = doctorCheck({
  name: 'kubelet',
  rank: 50,
  looks: "each worker's kubelet is active (the journal's last line when not)",
  asks: serviceProbes,
  judge: ({ machine, answers }) => (machine.role === 'worker' ? serviceDown(machine, 'kubelet', answers) : []),
  explains: { node: sameMachine },
});

/** A worker's kube-proxy not active. */
export const kubeProxy = doctorCheck({
  name: 'kube-proxy',
  rank: 100,
  looks: "each worker's kube-proxy is active (the journal's last line when not)",
  asks: serviceProbes,
  judge: ({ machine, answers }) => (machine.role === 'worker' ? serviceDown(machine, 'kube-proxy', answers) : []),
});

/** `== SERVICE` sections of the journal probe: service -> its last lines. */
export function parseJournals(text: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  let current: string[] | undefined;
  for (const line of text.split('\n')) {
    const head = /^== (\S+)$/.exec(line);
    if (head) out.set(head[1]!, (current = []));
    else if (current && line.trim()) current.push(line.trim());
  }
  return out;
}

/** What the names check asks: each machine's names resolved there, and what cloud-init will make of /etc/hosts at the next boot. */
function namesAsks({ inventory }: AskOf) {
  return {
    names: namesResolved.ask(inventory.machines.flatMap((x) => [x.hostname, x.fqdn])),
    // Only hardway's block of each cloud-init hosts template (the distribution's is chosen later).
    templates: hostsTemplateBlocks.ask(),
    // cloud-init's config in pin-hosts' merge order, only the lines that say its distribution and manage_etc_hosts.
    cloudCfg: cloudConfigKeys.ask(),
  };
}

/** Names that do not resolve to their machine, and a cloud-init template that lost hardway's block. */
export const names = doctorCheck({
  name: 'names',
  rank: 40,
  looks: "each machine resolves the cluster's names to their machines, and its cloud-init hosts template still holds pin-hosts' block (else the next boot loses them)",
  asks: namesAsks,
  reads: () => ['/etc/hosts', '/etc/os-release'],
  judge: ({ ctx, machine, answers, files }) => nameFindings(ctx, machine, answers, files),
  explains: { node: sameMachine },
});

/** Names that do not resolve to their machine, and a cloud-init template that lost hardway's block. */
function nameFindings(ctx: DoctorContext, m: Machine, a: MachineAnswers<ReturnType<typeof namesAsks>>, files: MachineEvidence['files']): Found[] {
  const inv = ctx.inventory;
  const first = a.names ?? new Map<string, string>();
  const wrong = inv.machines.flatMap((x) => [x.hostname, x.fqdn].map((n) => ({ n, want: x.ip, got: first.get(n) ?? '' }))).filter((r) => r.got !== r.want);
  const template = templateState(ctx, stdoutOf(a.cloudCfg), stdoutOf(a.templates), files['/etc/os-release'] ?? '');
  if (wrong.length === 0 && template.ok) return [];
  const api = wrong.find((w) => w.n === inv.apiServerName);
  const shown = api ?? wrong[0];
  let cause: string;
  if (shown) {
    const what = shown.got ? `resolves to ${shown.got} (want ${shown.want})` : 'does not resolve';
    const why = api && m.role === 'worker' ? ': the kubelet and kube-proxy there cannot reach the API server' : '';
    cause = `${shown.n} ${what} on ${m.hostname}${why}` + (wrong.length > 1 ? ` (${wrong.length} names in all)` : '');
    cause += template.ok ? '' : `; ${template.note}`;
  } else {
    cause = `names resolve on ${m.hostname} now, but ${template.note}`;
  }
  const evidence = [
    ...(shown ? [`getent hosts ${shown.n}: ${shown.got ? `${shown.got} ${shown.n}` : '(no answer)'}`] : []),
    ...(template.ok ? [] : [template.evidence]),
  ].join('; ');
  return [{ machine: m.hostname, cause, evidence, fix: stepsFix(['pin-hosts'], m.hostname) }];
}

/** Whether cloud-init's hosts template for this machine's distribution still holds exactly hardway's block. */
function templateState(ctx: DoctorContext, cloudCfg: string, templates: string, osRelease: string): { ok: boolean; note: string; evidence: string } {
  const ci = cloudInitFacts(cloudCfg, osRelease);
  const blocks = parseTemplateBlocks(templates);
  const file = `hosts.${ci.family}.tmpl`;
  // No cloud-init managing /etc/hosts, or no template: nothing regenerates the file, nothing to lose.
  if (!ci.managesHosts || !blocks.has(file)) return { ok: true, note: '', evidence: '' };
  const block = blocks.get(file)!;
  if (block === hostsBlock(ctx.inventory)) return { ok: true, note: '', evidence: '' };
  const evidence = `/etc/cloud/templates/${file}: ${block ? "hardway's block differs from machines.txt" : "no hardway block"}`;
  return { ok: false, note: `cloud-init's hosts template (${file}) ${block ? 'has an outdated block' : "no longer has hardway's block"}, so every boot rewrites /etc/hosts without the cluster's names`, evidence };
}

/** `== FILE` sections of the templates probe: template file -> hardway's block in it ('' when none). */
export function parseTemplateBlocks(text: string): Map<string, string> {
  const out = new Map<string, string>();
  let current: string | undefined;
  for (const line of text.split('\n')) {
    const head = /^== (\S+)$/.exec(line);
    if (head) out.set((current = head[1]!), '');
    else if (current !== undefined && line !== '') out.set(current, out.get(current)! + line + '\n');
  }
  return out;
}

/** The worker's CNI configs against what hardway renders (a bridge config with another pod subnet is pod-subnet's). */
export const cni = doctorCheck({
  name: 'cni',
  rank: 70,
  looks: "each worker's CNI configs are there, as hardway installs them",
  reads: ({ machine, rendered }) => (machine.role === 'worker' ? rendered.filter((p) => cniPaths.includes(p)) : []),
  judge: ({ ctx, machine, files }) => cniFindings(ctx, machine, files),
  explains: { node: sameMachine },
});

/** The CNI configs hardway installs on a worker. */
const cniPaths: readonly string[] = [WORKER.cniBridgeConf, WORKER.cniLoopbackConf];

/** The CNI configs on `m` that hardway renders and the machine was asked for. */
export function cniConfigs(ctx: DoctorContext, m: Machine, files: MachineEvidence['files']): string[] {
  const want = ctx.rendered[m.hostname] ?? {};
  return cniPaths.filter((p) => want[p] !== undefined && p in files);
}

function cniFindings(ctx: DoctorContext, m: Machine, files: MachineEvidence['files']): Found[] {
  if (m.role !== 'worker') return [];
  const want = ctx.rendered[m.hostname] ?? {};
  const paths = cniConfigs(ctx, m, files);
  const fix = stepsFix(['cni'], m.hostname);
  const missing = paths.filter((p) => files[p] === null);
  // containerd takes the first config it finds as the pod network, so the loopback config alone
  // still reads as "network ready": pods then start without one.
  const alone = missing.includes(WORKER.cniBridgeConf) && missing.length < paths.length;
  const findings: Found[] = missing.length === 0 ? [] : [{
    machine: m.hostname, fix,
    cause: alone
      ? `no pod network config ${WORKER.cniBridgeConf} on ${m.hostname}: containerd takes the loopback config for the network, so new pods there get no address`
      : `no CNI config on ${m.hostname}: the container runtime reports the network not ready (cni config uninitialized), so the node is NotReady`,
    evidence: missing.map((p) => `cat ${p}: No such file or directory`).join('; '),
  }];
  for (const path of paths.filter((p) => files[p] !== null && files[p] !== want[p] && otherSubnet(m, p, files[p]!) === undefined)) {
    findings.push({ machine: m.hostname, fix, cause: `the CNI config ${path} on ${m.hostname} differs from what hardway installs`, evidence: `sha256 of ${path} differs from the rendered file` });
  }
  return findings;
}

/** The pod subnet of `m`'s bridge config at `path` when it is not machines.txt's (pod-subnet's finding, not cni's). */
export function otherSubnet(m: Machine, path: string, conf: string): string | undefined {
  const subnet = /"subnet"\s*:\s*"([^"]+)"/.exec(conf)?.[1];
  return path === WORKER.cniBridgeConf && subnet && subnet !== m.podSubnet ? subnet : undefined;
}
