// The filter table as `iptables -S` lists it, and what hardway wants of it for the pod network: a
// chain of its own that accepts the cluster CIDR as source and as destination, jumped to from
// FORWARD before any rule that drops, so pod traffic is forwarded whatever FORWARD's policy is (DROP
// after installing Docker). Pure: the pod-forwarding step plans from it, doctor judges with it.
import { overlaps, parseCidr } from './ipv4.ts';

/** hardway's own chain in the filter table. */
export const POD_FORWARD_CHAIN = 'HARDWAY-FORWARD';

/** The rule of FORWARD that jumps to POD_FORWARD_CHAIN, as `iptables -S` prints it (without `-A FORWARD`). */
export const POD_FORWARD_JUMP = `-j ${POD_FORWARD_CHAIN}`;

/** The filter table: each built-in chain's policy, each chain's rules (`-A CHAIN` left out) in order. */
export interface FilterTable {
  /** False when `iptables -S` failed (iptables not installed yet): nothing else is known. */
  available: boolean;
  policies: Map<string, string>;
  chains: Map<string, string[]>;
}

/** Parses `iptables -S` output (code: its exit code). */
export function parseFilterTable(stdout: string, code = 0): FilterTable {
  const policies = new Map<string, string>();
  const chains = new Map<string, string[]>();
  const chain = (name: string) => chains.get(name) ?? chains.set(name, []).get(name)!;
  for (const line of stdout.split('\n')) {
    const m = /^-([PNA]) (\S+)(?: (.*))?$/.exec(line.trim());
    if (!m) continue;
    if (m[1] === 'P') {
      policies.set(m[2]!, (m[3] ?? '').trim());
      chain(m[2]!);
    } else if (m[1] === 'N') chain(m[2]!);
    else chain(m[2]!).push((m[3] ?? '').trim());
  }
  return { available: code === 0, policies, chains };
}

/** The rules POD_FORWARD_CHAIN must hold, in order, for the cluster CIDR. */
export function podForwardRules(clusterCidr: string): string[] {
  return [`-s ${clusterCidr} -j ACCEPT`, `-d ${clusterCidr} -j ACCEPT`];
}

/** The value after `flag` in a rule's words, and whether a `!` negates it. */
function match(words: string[], flag: string): { value: string; negated: boolean } | undefined {
  const i = words.indexOf(flag);
  if (i < 0 || i + 1 >= words.length) return undefined;
  return { value: words[i + 1]!, negated: words[i - 1] === '!' };
}

/**
 * Whether a rule of FORWARD drops (or rejects) traffic of the pod network: its target is DROP or
 * REJECT, it is not about INVALID packets only (kube-proxy's own, rightly first), and neither its
 * source nor its destination (when it names them) keeps it off the cluster CIDR. Other matches
 * (protocol, port, interface) narrow a rule without making it harmless, so they count as matching.
 * Jumps to other chains are not followed: Docker's DOCKER-USER and kube-proxy's chains drop no pod
 * traffic as they are made.
 */
export function dropsPodTraffic(rule: string, clusterCidr: string): boolean {
  const words = rule.split(/\s+/);
  const target = match(words, '-j')?.value;
  if (target !== 'DROP' && target !== 'REJECT') return false;
  const state = match(words, '--ctstate') ?? match(words, '--state');
  if (state && !state.negated && state.value === 'INVALID') return false;
  const cluster = parseCidr(clusterCidr);
  if (!cluster.ok) return true;
  const sides = [match(words, '-s'), match(words, '-d')].filter((s) => s !== undefined);
  const touches = (s: { value: string; negated: boolean }) => {
    const net = parseCidr(s.value.includes('/') ? s.value : `${s.value}/32`);
    return s.negated || !net.ok || overlaps(net.net, cluster.net);
  };
  // A rule naming an address outside the pod network (a blocked outside host) is the admin's choice
  // about that host, not a drop of the pod network; a rule naming none drops everything.
  return sides.every(touches);
}

/** What FORWARD does to pod traffic: where hardway's jump is, and the rules and policy that would drop it otherwise. */
export interface ForwardState {
  /** FORWARD's policy (ACCEPT, DROP); undefined when unknown. */
  policy: string | undefined;
  /** How many times FORWARD jumps to POD_FORWARD_CHAIN. */
  jumps: number;
  /** The rules of FORWARD before the first jump (all of them without one) that drop pod traffic. */
  dropsBefore: string[];
  /** POD_FORWARD_CHAIN exists. */
  chainExists: boolean;
  /** Its rules as they are. */
  chainRules: string[];
}

/** The state of FORWARD and POD_FORWARD_CHAIN for the cluster CIDR. */
export function forwardState(table: FilterTable, clusterCidr: string): ForwardState {
  const forward = table.chains.get('FORWARD') ?? [];
  const first = forward.indexOf(POD_FORWARD_JUMP);
  const before = first < 0 ? forward : forward.slice(0, first);
  return {
    policy: table.policies.get('FORWARD'),
    jumps: forward.filter((r) => r === POD_FORWARD_JUMP).length,
    dropsBefore: before.filter((r) => dropsPodTraffic(r, clusterCidr)),
    chainExists: table.chains.has(POD_FORWARD_CHAIN),
    chainRules: table.chains.get(POD_FORWARD_CHAIN) ?? [],
  };
}
