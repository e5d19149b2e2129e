// Probes of the machine's network: its routing table (the routes step changes it, verify, doctor
// and reset read it), the CNI bridge, pod network namespaces, kube-proxy's iptables rules and the filter table.
import { sh } from '../shell.ts';
import { parseFilterTable } from '../net/pod-forwarding.ts';
import { probe } from './probe.ts';

/** A route as `ip -4 route show` lists it. */
export interface LiveRoute {
  dst: string;
  via?: string;
}

/** Parses `ip -4 route show` output. */
export function parseRoutes(text: string): LiveRoute[] {
  return text.split('\n').filter(Boolean).map((line) => {
    const words = line.trim().split(/\s+/);
    const via = words.indexOf('via');
    return { dst: words[0]!, ...(via > 0 ? { via: words[via + 1] } : {}) };
  });
}

/** The IPv4 routing table. */
export const routes = probe('routes', () => sh`ip -4 route show`, (a) => parseRoutes(a.stdout));

/** The IPv4 addresses of a link (`ip -4 -o addr show dev`), none when it does not exist. */
export const linkAddresses = probe('link-addresses', (dev: string) => sh`ip -4 -o addr show dev ${dev} 2>/dev/null`);

/** Whether a link exists. */
export const linkExists = probe('link-exists', (dev: string) => sh`ip -o link show dev ${dev} 2>/dev/null`, (a) => a.stdout.trim() !== '');

/** The network namespaces (pods' leftovers after their runtime is gone). */
export const netnsNames = probe('netns', () => sh`ip netns list 2>/dev/null; :`, (a) => a.stdout.split('\n').map((l) => l.trim().split(' ')[0]!).filter(Boolean));

/** How many lines of the IPv4 or IPv6 rules match `pattern` (kube-proxy's and the kubelet's chains). */
export const iptablesRuleCount = probe('iptables-rule-count', (family: 'v4' | 'v6', pattern: string) =>
  (family === 'v4' ? sh`iptables-save 2>/dev/null | grep -cE ${pattern}` : sh`ip6tables-save 2>/dev/null | grep -cE ${pattern}`), (a) => Number(a.stdout.trim()) || 0);

/** The filter table (`iptables -S`): FORWARD's policy and rules, hardway's pod forwarding chain; unavailable without iptables. */
export const filterTable = probe('iptables-filter', () => sh`iptables -w -S 2>/dev/null`, (a) => parseFilterTable(a.stdout, a.code));
