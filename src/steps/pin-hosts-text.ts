// The pure text rules of pin-hosts (see the header of pin-hosts.ts): where the block goes, the
// 127.0.1.1 rule, and which cloud-init hosts template applies. Text in, text out.
import type { Inventory, Machine } from '../inventory.ts';
import { applyMarkedBlock, type BlockMarkers } from '../render/marked-block.ts';

/** A line that maps an address (IPv4, IPv6, or a templated `{{ }}` one) or a Jinja statement. */
const ANCHOR = /^\s*(\d{1,3}(\.\d{1,3}){3}\s|[0-9a-fA-F]*:[0-9a-fA-F:.]*\s|\{\{|\{%)/;

/** Puts the block into the text exactly once, before the first address line (or at the end). */
export function placeBlock(text: string, block: string, markers: BlockMarkers): string {
  if (/\{\{|\{%|\{#|\$/.test(block)) throw new Error('hosts block must not contain template syntax');
  const merged = applyMarkedBlock(text, block, markers);
  const lines = merged.split('\n');
  lines.pop(); // applyMarkedBlock ends every line with \n
  const begin = lines.findIndex((l) => l.trimEnd() === markers.begin);
  const end = lines.findIndex((l, i) => i > begin && l.trimEnd() === markers.end);
  const blockLines = lines.slice(begin, end + 1);
  const rest = [...lines.slice(0, begin), ...lines.slice(end + 1)];
  const anchor = rest.findIndex((l) => ANCHOR.test(l));
  const at = anchor < 0 ? rest.length : anchor;
  return [...rest.slice(0, at), ...blockLines, ...rest.slice(at)].map((l) => l + '\n').join('');
}

/** The 127.0.1.1 rule: a line naming neither this machine nor only non-cluster names is rewritten. */
export function pinLoopbackName(text: string, machine: Machine, inv: Inventory): string {
  const own = new Set([machine.hostname, machine.fqdn]);
  const others = new Set(inv.machines.filter((m) => m !== machine).flatMap((m) => [m.hostname, m.fqdn]));
  const good = `127.0.1.1 ${machine.fqdn} ${machine.hostname}`;
  let seenGood = false;
  const out: string[] = [];
  for (const line of text.split('\n')) {
    const m = /^\s*127\.0\.1\.1\s+([^#]*)/.exec(line);
    if (!m) {
      out.push(line);
      continue;
    }
    const names = m[1]!.trim().split(/\s+/).filter(Boolean);
    const stale = !names.some((n) => own.has(n)) || names.some((n) => others.has(n));
    if (!stale) out.push(line);
    else if (!seenGood) out.push(good);
    seenGood = true;
  }
  return out.join('\n');
}

/** cloud-init's view of this machine: the template family and whether it manages /etc/hosts. */
export interface CloudInitConfig {
  /** hosts.<family>.tmpl: cloud-init's distro os family (debian for Ubuntu too, redhat for Fedora...). */
  family: string;
  /** manage_etc_hosts is true/template (regenerated from the template) or localhost (edited in place). */
  managesHosts: boolean;
}

const FAMILIES: Record<string, string[]> = {
  debian: ['debian', 'ubuntu', 'raspberry-pi-os', 'linuxmint', 'pop', 'devuan'],
  redhat: ['rhel', 'centos', 'fedora', 'rocky', 'almalinux', 'cloudlinux', 'eurolinux', 'miraclelinux', 'virtuozzo', 'ol', 'amazon', 'openeuler', 'openmandriva', 'TencentOS'],
  suse: ['sles', 'opensuse', 'opensuse-leap', 'opensuse-tumbleweed', 'opensuse-microos', 'sle-micro', 'sle_hpc', 'suse'],
  arch: ['arch'],
  alpine: ['alpine'],
  gentoo: ['gentoo'],
  photon: ['photon'],
  mariner: ['mariner', 'azurelinux'],
  freebsd: ['freebsd', 'dragonfly'],
};

/** Every template family cloud-init may use (hosts.<family>.tmpl). */
export const TEMPLATE_FAMILIES = Object.keys(FAMILIES);

/** Reads the distro (cloud.cfg `distro:`, else os-release ID, then ID_LIKE) and manage_etc_hosts. */
export function cloudInitFacts(cloudCfg: string, osRelease: string): CloudInitConfig {
  const field = (key: string) => new RegExp(`^${key}=["']?([^"'\\n]*)`, 'm').exec(osRelease)?.[1]?.trim();
  const candidates = [
    /^\s+distro:\s*["']?([A-Za-z0-9_.-]+)/m.exec(cloudCfg)?.[1],
    field('ID'),
    ...(field('ID_LIKE')?.split(/\s+/) ?? []),
  ].filter((d): d is string => !!d);
  const family = candidates.map(familyOf).find((f) => f !== undefined) ?? 'debian';
  // The last top-level setting wins: user-data (read last) overrides the system config.
  const values = [...cloudCfg.matchAll(/^manage_etc_hosts\s*:\s*["']?([A-Za-z]+)/gm)].map((m) => m[1]!.toLowerCase());
  const last = values.at(-1);
  return { family, managesHosts: last !== undefined && ['true', 'yes', 'on', 'template', 'localhost'].includes(last) };
}

function familyOf(distro: string): string | undefined {
  return Object.keys(FAMILIES).find((f) => FAMILIES[f]!.includes(distro));
}
