// The unit that restores hardway's pod forwarding rules at boot: its own chain accepting the
// cluster CIDR both ways, jumped to first from FORWARD (the pod-forwarding step sets them at once too).
import type { Inventory, Machine } from '../inventory.ts';
import { ANY } from '../layout.ts';
import { POD_FORWARD_CHAIN, podForwardRules } from '../net/pod-forwarding.ts';
import type { TemplateSet } from './templates.ts';
import type { RenderedFile } from './types.ts';

/** The systemd service name of the pod forwarding unit. */
export const POD_FORWARDING_SERVICE = ANY.podForwardingUnit.replace(/^.*\//, '').replace(/\.service$/, '');

/** The iptables kube-proxy calls too (Debian 12: the nf_tables backend), by the path systemd runs. */
export const IPTABLES = '/usr/sbin/iptables';

/** The pod forwarding unit of a worker (none on a control plane, which forwards no pod traffic). */
export function renderPodForwarding(inv: Inventory, machine: Machine, templates: TemplateSet): RenderedFile[] {
  if (machine.role !== 'worker') return [];
  const values = { cidr: inv.settings.clusterCidr, chain: POD_FORWARD_CHAIN, iptables: IPTABLES, rules: podForwardRules(inv.settings.clusterCidr) };
  return [{
    path: ANY.podForwardingUnit,
    content: templates.render('units/hardway-pod-forwarding.service.hbs', values),
    mode: 0o644,
    step: 'pod-forwarding',
    services: [POD_FORWARDING_SERVICE],
  }];
}
