// pod-forwarding: every worker forwards the cluster's pod network whatever the policy of iptables'
// FORWARD chain (DROP once Docker is installed; kube-proxy's KUBE-FORWARD accepts only the replies
// of connections already accepted). A chain of hardway's own accepts the cluster CIDR as source and
// as destination, and FORWARD jumps to it before any rule that drops: the rules are set at once and
// restored at boot by a oneshot unit, like the routes. A step of its own rather than part of
// worker-os: it needs iptables (which worker-os installs), and its fix, run alone, touches nothing
// else (`--only pod-forwarding`).
import type { Change, ChangeStep, StepContext } from '../engine/types.ts';
import { ANY } from '../layout.ts';
import { forwardState, POD_FORWARD_CHAIN, podForwardRules, type ForwardState } from '../net/pod-forwarding.ts';
import { filterTable } from '../probes/network.ts';
import { POD_FORWARDING_SERVICE } from '../render/pod-forwarding.ts';
import { joinCommands, sh, type Command } from '../shell.ts';
import { fileChangesFrom, inspect } from './support/inspect.ts';
import { renderedFor } from './support/rendered.ts';
import { enableService, reloadChanges, startService } from './support/services.ts';

/** The commands (and why) that make FORWARD and POD_FORWARD_CHAIN forward the cluster CIDR; none when they do. */
export function forwardingCommands(state: ForwardState, clusterCidr: string): { cmds: Command[]; reasons: string[] } {
  const cmds: Command[] = [];
  const reasons: string[] = [];
  const wanted = podForwardRules(clusterCidr);
  if (!state.chainExists) {
    cmds.push(sh`iptables -w -N ${POD_FORWARD_CHAIN}`);
    reasons.push(`no chain ${POD_FORWARD_CHAIN}`);
  }
  if (state.chainRules.join('\n') !== wanted.join('\n')) {
    // Flushed and filled again: a rule for an old cluster CIDR goes with the flush.
    cmds.push(sh`iptables -w -F ${POD_FORWARD_CHAIN}`, ...wanted.map((r) => sh`iptables -w -A ${POD_FORWARD_CHAIN} ${r.split(' ')}`));
    const stale = state.chainRules.filter((r) => !wanted.includes(r));
    reasons.push(state.chainExists
      ? `${POD_FORWARD_CHAIN} holds ${state.chainRules.length ? state.chainRules.map((r) => `"${r}"`).join(', ') : 'no rule'}, not the ACCEPT of ${clusterCidr} both ways${stale.length ? ' (stale rules removed)' : ''}`
      : `accept ${clusterCidr} as source and as destination`);
  }
  const blocked = state.dropsBefore.length > 0 && state.jumps > 0;
  if (state.jumps !== 1 || blocked) {
    // Taken out (every copy) and put first again: before the rules that would drop pod traffic.
    for (let i = 0; i < state.jumps; i++) cmds.push(sh`iptables -w -D FORWARD -j ${POD_FORWARD_CHAIN}`);
    cmds.push(sh`iptables -w -I FORWARD 1 -j ${POD_FORWARD_CHAIN}`);
    reasons.push(state.jumps === 0
      ? `FORWARD does not jump to ${POD_FORWARD_CHAIN} (policy ${state.policy ?? 'unknown'}): ${state.policy === 'ACCEPT' ? 'pod traffic would be dropped once the policy is DROP (as Docker sets it)' : 'pod traffic is dropped by the policy'}`
      : blocked ? `FORWARD drops pod traffic before it jumps to ${POD_FORWARD_CHAIN}: ${state.dropsBefore.map((r) => `"-A FORWARD ${r}"`).join(', ')}`
        : `FORWARD jumps to ${POD_FORWARD_CHAIN} ${state.jumps} times`);
  }
  return { cmds, reasons };
}

/** The pod-forwarding step. */
export const podForwardingStep: ChangeStep = {
  name: 'pod-forwarding',
  title: "Forward the pod network whatever the FORWARD chain's policy, restored at boot",
  targets: (inv) => inv.workers,
  async plan(ctx: StepContext): Promise<Change[]> {
    const { inventory, machine, facts } = ctx;
    const { files } = renderedFor(inventory, machine, 'pod-forwarding');
    const found = await inspect(facts, [ANY.podForwardingUnit], [POD_FORWARDING_SERVICE], { table: filterTable.ask() });
    const cidr = inventory.settings.clusterCidr;
    // Without iptables yet (worker-os, earlier in the lane, installs it) the table is empty: all of it is planned.
    const { cmds, reasons } = forwardingCommands(forwardState(found.probes.table, cidr), cidr);
    // One command: each on its own costs an SSH channel and a shell.
    const changes: Change[] = cmds.length ? [{ kind: 'exec', cmd: joinCommands(cmds), reason: reasons.join('; ') }] : [];
    const unitWork = fileChangesFrom(found, files);
    changes.push(...unitWork);
    changes.push(...reloadChanges(found.services, unitWork));
    const { enabled, active } = found.services.get(POD_FORWARDING_SERVICE)!;
    if (enabled !== 'enabled') changes.push({ kind: 'exec', cmd: enableService(POD_FORWARDING_SERVICE), reason: 'restore the pod forwarding rules at boot' });
    // Started once so systemd knows the rules are in; the rules themselves were set above.
    if (active !== 'active') changes.push({ kind: 'exec', cmd: startService('start', POD_FORWARDING_SERVICE), reason: `${POD_FORWARDING_SERVICE} is ${active || 'inactive'}` });
    return changes;
  },
};
