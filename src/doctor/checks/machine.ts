// The machine itself: does it answer, are its services active, do the cluster's names resolve there
// (and will they after the next boot), is its CNI config what hardway installs. Pure.
import type { Machine } from '../../inventory.ts';
import { WORKER } from '../../layout.ts';
import { hostsBlock } from '../../render/hosts.ts';
import { cloudInitFacts } from '../../steps/pin-hosts-text.ts';
import { parseServiceStates } from '../../probes/systemd.ts';
import { resolvedAddresses } from '../../probes/names.ts';
import { serviceFix, stepsFix, unreachableFix } from '../fixes.ts';
import { servicesOf } from '../probes.ts';
import type { Check, DoctorContext, Finding, MachineEvidence } from '../types.ts';

/** The machine did not answer over SSH (or refused us): the one finding about it. */
export function sshFindings(ctx: DoctorContext, m: Machine, ev: MachineEvidence): Finding[] {
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
  return [{ machine: m.hostname, check: 'ssh', cause: u.hint ? `${cause}; ${u.hint}` : cause, evidence: `ssh ${m.ip}: ${u.message}`, fix }];
}

/** Every expected service that is not active, with the journal's last line. */
export function serviceFindings(ctx: DoctorContext, m: Machine, ev: MachineEvidence): Finding[] {
  const states = parseServiceStates(ev.probes.services?.stdout ?? '');
  const journals = parseJournals(ev.probes.journal?.stdout ?? '');
  const down = servicesOf(m).filter((s) => states.get(s)?.active !== 'active');
  // The kubelet's unit requires containerd's: a stopped containerd takes the kubelet with it, and
  // starting containerd alone does not bring it back. One finding, one fix for both.
  const withKubelet = down.includes('containerd') && down.includes('kubelet');
  return down.filter((s) => !(withKubelet && s === 'kubelet')).map((s) => {
    const state = states.get(s);
    const check: Check = m.role === 'control-plane' ? 'control-plane' : (s as Check);
    const active = state?.loaded === false ? 'not installed (no unit)' : state?.active || 'unknown';
    const last = journals.get(s)?.at(-1);
    const both = withKubelet && s === 'containerd';
    return {
      machine: m.hostname,
      check,
      cause: `${s} is ${active} on ${m.hostname}` + (both ? ', and the kubelet, whose unit requires it, stopped with it' : ''),
      evidence: `systemctl show ${s}: ActiveState=${state?.active || '?'}` + (last ? `; journalctl -u ${s}: ${last}` : '') +
        (both ? `; systemctl show kubelet: ActiveState=${states.get('kubelet')?.active || '?'}` : ''),
      fix: both ? stepsFix(ctx, ['containerd', 'kubelet'], m.hostname) : serviceFix(ctx, s, m.hostname),
    };
  });
}

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

/** Names that do not resolve to their machine, and a cloud-init template that lost hardway's block. */
export function nameFindings(ctx: DoctorContext, m: Machine, ev: MachineEvidence): Finding[] {
  const inv = ctx.inventory;
  const first = resolvedAddresses(ev.probes.names?.stdout ?? '');
  const wrong = inv.machines.flatMap((x) => [x.hostname, x.fqdn].map((n) => ({ n, want: x.ip, got: first.get(n) ?? '' }))).filter((r) => r.got !== r.want);
  const template = templateState(ctx, ev);
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
  return [{ machine: m.hostname, check: 'names', cause, evidence, fix: stepsFix(ctx, ['pin-hosts'], m.hostname) }];
}

/** Whether cloud-init's hosts template for this machine's distribution still holds exactly hardway's block. */
function templateState(ctx: DoctorContext, ev: MachineEvidence): { ok: boolean; note: string; evidence: string } {
  const cloudCfg = ev.probes.cloudCfg?.stdout ?? '';
  const ci = cloudInitFacts(cloudCfg, ev.files['/etc/os-release'] ?? '');
  const blocks = parseTemplateBlocks(ev.probes.templates?.stdout ?? '');
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

/** The worker's CNI configs against what hardway renders; a different pod subnet is named as such. */
export function cniFindings(ctx: DoctorContext, m: Machine, ev: MachineEvidence): Finding[] {
  if (m.role !== 'worker') return [];
  const want = ctx.rendered[m.hostname] ?? {};
  const paths = [WORKER.cniBridgeConf, WORKER.cniLoopbackConf].filter((p) => want[p] !== undefined && p in ev.files);
  const fix = stepsFix(ctx, ['cni'], m.hostname);
  const missing = paths.filter((p) => ev.files[p] === null);
  // containerd takes the first config it finds as the pod network, so the loopback config alone
  // still reads as "network ready": pods then start without one.
  const alone = missing.includes(WORKER.cniBridgeConf) && missing.length < paths.length;
  const findings: Finding[] = missing.length === 0 ? [] : [{
    machine: m.hostname, check: 'cni', fix,
    cause: alone
      ? `no pod network config ${WORKER.cniBridgeConf} on ${m.hostname}: containerd takes the loopback config for the network, so new pods there get no address`
      : `no CNI config on ${m.hostname}: the container runtime reports the network not ready (cni config uninitialized), so the node is NotReady`,
    evidence: missing.map((p) => `cat ${p}: No such file or directory`).join('; '),
  }];
  for (const path of paths.filter((p) => ev.files[p] !== null && ev.files[p] !== want[p])) {
    const subnet = subnetOf(ev.files[path]!);
    findings.push(path === WORKER.cniBridgeConf && subnet && subnet !== m.podSubnet
      ? { machine: m.hostname, check: 'pod-subnet', fix, cause: `the CNI config on ${m.hostname} gives pods addresses from ${subnet}, machines.txt says ${m.podSubnet}: other machines route ${m.podSubnet} here`, evidence: `${path}: "subnet": "${subnet}"` }
      : { machine: m.hostname, check: 'cni', fix, cause: `the CNI config ${path} on ${m.hostname} differs from what hardway installs`, evidence: `sha256 of ${path} differs from the rendered file` });
  }
  return findings;
}

/** The first "subnet" of a CNI config (host-local IPAM), if any. */
function subnetOf(conf: string): string | undefined {
  return /"subnet"\s*:\s*"([^"]+)"/.exec(conf)?.[1];
}
