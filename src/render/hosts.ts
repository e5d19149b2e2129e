// The hosts block: every machine's `IP FQDN HOSTNAME` line between hardway's markers, merged by the
// pin-hosts step into /etc/hosts and into cloud-init's hosts template (which regenerates /etc/hosts
// on boot when manage_etc_hosts is on, and would otherwise drop the names).
import { sharedApiHostsLines } from '../api-endpoints.ts';
import type { Inventory } from '../inventory.ts';
import { ANY, HOSTS_MARKERS } from '../layout.ts';
import type { RenderedFile } from './types.ts';

/** The marked block of every machine's name line, begin and end markers included, newline-terminated. */
export function hostsBlock(inv: Inventory): string {
  // With several control planes, the shared API name on a line per control plane, after the machines.
  const lines = [...inv.machines.map((m) => `${m.ip} ${m.fqdn} ${m.hostname}`), ...sharedApiHostsLines(inv)];
  return [HOSTS_MARKERS.begin, ...lines, HOSTS_MARKERS.end].map((l) => l + '\n').join('');
}

/** The files the hosts block is merged into, for the given cloud-init distribution template. */
export function hostsTargets(distro = 'debian'): string[] {
  return [ANY.hosts, ANY.cloudHostsTemplate(distro)];
}

/** The hosts block as rendered files, one per target (`<target>.hardway-block`, merged by pin-hosts). */
export function renderHostsBlocks(inv: Inventory): RenderedFile[] {
  const content = hostsBlock(inv);
  return hostsTargets().map((target) => ({
    path: `${target}.hardway-block`,
    content,
    mode: 0o644,
    step: 'pin-hosts',
    services: [],
    mergeInto: target,
  }));
}
