// Cluster DNS: does each worker's kubelet give pods the kube-dns address and a resolver file that is
// not the node's own stub (in a pod, 127.0.0.53 is the pod: CoreDNS there forwards to itself), and
// does CoreDNS run. A kubelet's settings explain the CoreDNS pod that crashes on its node. Pure.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { COREDNS_IMAGE, imagesDir } from '../../images/names.ts';
import type { Machine } from '../../inventory.ts';
import { WORKER } from '../../layout.ts';
import { DNS_DEPLOYMENT, DNS_NAMESPACE } from '../../dns/manifest.ts';
import { kubeletResolver } from '../../probes/kubelet.ts';
import { projectFix, stepsFix } from '../fixes.ts';
import { KUBELET_DNS_PROBE } from '../probes.ts';
import type { ApiEvidence, DoctorContext, MachineEvidence } from '../types.ts';
import { doctorCheck, stdoutOf, type Found } from './check.ts';

/** A worker's kubelet DNS settings; its finding explains the CoreDNS pod on that node that does not run. */
export const kubeletDns = doctorCheck({
  name: 'kubelet-dns',
  rank: 150,
  looks: "each worker's kubelet gives pods the kube-dns address, and a resolver file whose nameserver is not a stub on the node itself (such as 127.0.0.53)",
  asks: ({ machine }) => (machine.role === 'worker' ? { [KUBELET_DNS_PROBE]: kubeletResolver.ask() } : {}),
  reads: ({ machine }) => (machine.role === 'worker' ? [WORKER.kubeletConfig] : []),
  judge: ({ ctx, machine, answers, files }) => kubeletDnsFindings(ctx, machine, stdoutOf(answers[KUBELET_DNS_PROBE]), files),
  explains: { dns: (mine, theirs) => mine.machine === theirs.machine && theirs.about?.kind === 'pod' },
});

/** CoreDNS as the API sees it; one with no fix is a symptom, placed with the pods. */
export const dns = doctorCheck({
  name: 'dns',
  rank: 160,
  looks: 'CoreDNS, as the API says: its Deployment exists and is not scaled to 0, and its pods run and are ready',
  api: (ctx, api) => corednsFindings(ctx, api),
  rankAs: (f) => (f.fix === null ? 'pods' : undefined),
});

/** The resolver file hardway gives the kubelet: systemd-resolved's real one where it runs (never its stub), else /etc/resolv.conf. */
export function kubeletResolverFile(resolvedActive: boolean): string {
  return resolvedActive ? '/run/systemd/resolve/resolv.conf' : '/etc/resolv.conf';
}

/** What the kubelet DNS probe says: the resolver file, whether systemd-resolved runs, that file's nameservers. */
export function parseKubeletDns(text: string): { file: string; resolved: boolean; nameservers: string[] } {
  const lines = text.split('\n');
  const value = (key: string) => lines.find((l) => l.startsWith(`${key}=`))?.slice(key.length + 1).trim() ?? '';
  return {
    file: value('resolvConf'),
    resolved: value('resolved') === 'active',
    nameservers: lines.flatMap((l) => /^nameserver\s+(\S+)/.exec(l)?.[1] ?? []),
  };
}

/** A nameserver that is the node itself: in a pod's network namespace that address is the pod. */
const isLocal = (ip: string) => ip.startsWith('127.') || ip === '::1';

/** The kubelet's DNS settings on a worker: clusterDNS other than the kube-dns address, or a stub resolver handed to pods. */
function kubeletDnsFindings(ctx: DoctorContext, m: Machine, probe: string, files: MachineEvidence['files']): Found[] {
  const config = files[WORKER.kubeletConfig];
  if (m.role !== 'worker' || !ctx.inventory.settings.dns.enabled || !config) return [];
  const found: Found[] = [];
  const parsed = (() => {
    try {
      return (parseYaml(config) ?? {}) as { clusterDNS?: unknown };
    } catch {
      return {};
    }
  })();
  const clusterDns = Array.isArray(parsed.clusterDNS) ? parsed.clusterDNS.map(String) : [];
  const want = ctx.inventory.clusterDnsIp;
  if (!clusterDns.includes(want)) {
    found.push({
      machine: m.hostname,
      cause: `the kubelet on ${m.hostname} gives pods ${clusterDns.length ? clusterDns.join(', ') : 'no cluster DNS server'} to ask for names, but the kube-dns Service is at ${want}: ` +
        'Services cannot be found by name from pods there (pods started before the fix keep their old settings until they are made anew)',
      evidence: `${WORKER.kubeletConfig}: clusterDNS ${clusterDns.length ? clusterDns.join(', ') : '(none)'}`,
      fix: stepsFix(['kubelet'], m.hostname),
    });
  }
  const resolver = parseKubeletDns(probe);
  const local = resolver.nameservers.filter(isLocal);
  if (resolver.file && local.length > 0) {
    const hardways = kubeletResolverFile(resolver.resolved);
    const drift = resolver.file !== hardways;
    found.push({
      machine: m.hostname,
      cause: `the kubelet on ${m.hostname} hands pods ${resolver.file}, whose nameserver ${local[0]} is a stub resolver on the node itself: ` +
        `in a pod that address is the pod, so CoreDNS there forwards to itself (a loop)` +
        (drift ? `; hardway gives the kubelet ${hardways}, and the fix also replaces the CoreDNS pods that crash`
          : `; point ${resolver.file} at the network's resolvers${resolver.resolved ? '' : ' (or run systemd-resolved: hardway then gives the kubelet its /run/systemd/resolve/resolv.conf)'}`),
      evidence: `${WORKER.kubeletConfig}: resolvConf ${resolver.file}; ${resolver.file}: ${resolver.nameservers.map((n) => `nameserver ${n}`).join(', ')}`,
      fix: drift ? stepsFix(['kubelet', 'dns']) : null,
    });
  }
  return found;
}

/**
 * Seconds a CoreDNS pod may run without being ready before doctor calls it a fault: a pod that has
 * just started (or whose node came back) answers /ready only once it has read the API, which on a
 * loaded host takes tens of seconds.
 */
export const NOT_READY_GRACE_S = 60;

/** Event messages longer than this are cut in the evidence. */
const EVENT_MAX = 300;

/** A pod running but not ready for less than the grace: still starting, not a fault. */
function stillStarting(p: { trouble: string; notReadySince?: string }, now: number): boolean {
  if (p.trouble !== 'not-ready' || !p.notReadySince) return false;
  const since = Date.parse(p.notReadySince);
  return Number.isFinite(since) && now - since < NOT_READY_GRACE_S * 1000;
}

/**
 * CoreDNS as the API sees it: the Deployment missing or scaled to zero, and each CoreDNS pod that
 * does not run, with the API's reason (one running but not ready for less than NOT_READY_GRACE_S
 * is still starting, and left out).
 */
function corednsFindings(ctx: DoctorContext, api: ApiEvidence): Found[] {
  const inv = ctx.inventory;
  if (!inv.settings.dns.enabled) return [];
  const cp = inv.controlPlanes[0]!.hostname;
  const deployment = api.dnsDeployment;
  const down = `nothing answers at ${inv.clusterDnsIp}, so no pod finds a Service by its name`;
  if (!deployment) {
    return [{ machine: cp, cause: `the CoreDNS Deployment ${DNS_NAMESPACE}/${DNS_DEPLOYMENT} does not exist: ${down}`,
      evidence: `${api.command}: no deployment ${DNS_NAMESPACE}/${DNS_DEPLOYMENT}`, fix: stepsFix(['dns'], cp) }];
  }
  if (deployment.replicas === 0) {
    return [{ machine: cp, cause: `CoreDNS is scaled to 0 replicas: ${down}`,
      evidence: `${api.command}: deployment ${DNS_NAMESPACE}/${DNS_DEPLOYMENT} replicas 0`, fix: stepsFix(['dns'], cp) }];
  }
  const dnsPods = api.podProblems.filter((p) => p.namespace === DNS_NAMESPACE && p.labels['k8s-app'] === 'kube-dns' && !stillStarting(p, ctx.now));
  return dnsPods.flatMap((p): Found[] => {
    const machine = p.node || cp;
    // The pod's last warning event says why (a readiness probe's answer, a failed mount, a kill).
    const event = api.podEvents?.find((e) => e.namespace === p.namespace && e.pod === p.name);
    const evidence = `kubectl get pods,events -n ${DNS_NAMESPACE}: ${p.name}${p.node ? ` on ${p.node}` : ''}: ${p.why}` +
      (event ? `; event ${event.reason}: ${event.message.slice(0, EVENT_MAX)}` : '');
    const about = { kind: 'pod' };
    const where = p.node ? ` on ${p.node}` : '';
    if (p.trouble === 'crash-loop') {
      const loop = /Loop \(.*\) detected/.test(p.why);
      return [{ machine, evidence, about, fix: stepsFix(['dns'], cp),
        cause: loop
          ? `CoreDNS pod ${p.name}${where} forwards to itself (its loop plugin stopped it): it still has the resolver file its node gave it when it started; a new pod gets the node's file as it is now`
          : `CoreDNS pod ${p.name}${where} crash-loops; a new pod starts with the ConfigMap and the node's resolver file as they are now` }];
    }
    if (p.trouble === 'image-pull' && p.why.includes(COREDNS_IMAGE)) {
      const built = existsSync(join(imagesDir(inv.dir), 'coredns.tar'));
      return [{ machine, evidence, about,
        cause: `CoreDNS pod ${p.name}${where} cannot start: ${COREDNS_IMAGE} is not on the node (it is built offline${built ? ' and is in images/: load it' : ': build it, then run "hardway images"'})`,
        fix: built ? stepsFix(['images'], machine) : projectFix('build-images') }];
    }
    return [{ machine, evidence, about, fix: null, cause: `CoreDNS pod ${p.name}${where} does not run (${p.trouble}): ${p.why}` }];
  });
}
