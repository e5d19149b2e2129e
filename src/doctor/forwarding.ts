// Whether a worker's firewall drops pod traffic: FORWARD's policy DROP or REJECT with no jump to
// hardway's pod forwarding chain, or a rule of FORWARD before that jump that drops the pod network.
// Pure, from the filter table (`iptables -S`, the iptables-filter probe) and the cluster CIDR; the
// doctor check that reports it wraps this (its fix: the pod-forwarding step on that machine).
import { forwardState, POD_FORWARD_CHAIN, podForwardRules, type FilterTable } from '../net/pod-forwarding.ts';

/** What drops pod traffic on a machine: why, in a sentence, and the line of `iptables -S` that shows it. */
export interface ForwardingVerdict {
  cause: string;
  evidence: string;
}

/** Why pod traffic through this machine is dropped by its filter table, or undefined when it is not (or iptables cannot be read). */
export function podTrafficDropped(table: FilterTable, clusterCidr: string): ForwardingVerdict | undefined {
  if (!table.available) return undefined;
  const s = forwardState(table, clusterCidr);
  const accepting = s.chainExists && podForwardRules(clusterCidr).every((r) => s.chainRules.includes(r));
  if (s.jumps > 0 && s.dropsBefore.length > 0) {
    return {
      cause: `FORWARD drops pod traffic (${clusterCidr}) before its jump to ${POD_FORWARD_CHAIN}`,
      evidence: `iptables -S FORWARD: -A FORWARD ${s.dropsBefore[0]} (before -A FORWARD -j ${POD_FORWARD_CHAIN})`,
    };
  }
  const dropping = s.policy === 'DROP' || s.policy === 'REJECT';
  if (s.jumps > 0 && accepting) return undefined;
  // No jump (or a chain that does not accept the CIDR): FORWARD's own rules and its policy decide.
  if (s.dropsBefore.length > 0) {
    return { cause: `FORWARD drops pod traffic (${clusterCidr}) and does not jump to ${POD_FORWARD_CHAIN}`, evidence: `iptables -S FORWARD: -A FORWARD ${s.dropsBefore[0]}` };
  }
  if (dropping) {
    const why = s.jumps === 0 ? `no jump to ${POD_FORWARD_CHAIN}` : `${POD_FORWARD_CHAIN} does not accept ${clusterCidr}`;
    return {
      cause: `FORWARD's policy is ${s.policy} and pod traffic (${clusterCidr}) has no rule of its own (${why}): kube-proxy accepts only replies to connections already made`,
      evidence: `iptables -S FORWARD: -P FORWARD ${s.policy}`,
    };
  }
  return undefined;
}
