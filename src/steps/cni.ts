// cni: the CNI plugins and this worker's bridge network (its own pod subnet) and loopback configs.
// containerd reads them for every new pod sandbox, so nothing restarts.
import { REQUIRED_CNI_PLUGINS } from '../download/layout.ts';
import type { Change, ChangeStep, StepContext } from '../engine/types.ts';
import { contains, parseCidr, parseIPv4 } from '../net/ipv4.ts';
import { sh } from '../shell.ts';
import { workerComponentStep } from './support/worker-component.ts';
import { linkAddresses } from '../probes/network.ts';

/** The bridge device the bridge config names (templates/10-bridge.conf.hbs). */
export const CNI_BRIDGE = 'cni0';

const installStep = workerComponentStep({
  name: 'cni',
  title: "Install the CNI plugins and this worker's pod network configs",
  binaries: [],
  cniPlugins: REQUIRED_CNI_PLUGINS,
});

/** The IPv4 addresses (`a.b.c.d/len`) in `ip -4 -o addr show dev cni0` output outside `podSubnet`. */
export function staleBridgeAddresses(ipAddrOutput: string, podSubnet: string): string[] {
  const subnet = parseCidr(podSubnet);
  if (!subnet.ok) return [];
  return [...ipAddrOutput.matchAll(/\binet (\d+\.\d+\.\d+\.\d+)\/(\d+)/g)]
    .filter((m) => !contains(subnet.net, parseIPv4(m[1]!)!))
    .map((m) => `${m[1]}/${m[2]}`);
}

/** The cni step. */
export const cniStep: ChangeStep = {
  ...installStep,
  async plan(ctx: StepContext): Promise<Change[]> {
    // After a pod subnet change the bridge keeps the old gateway address, and the bridge plugin
    // then refuses every new pod ("cni0 already has an IP address different from ..."). Removing
    // the stale address lets the plugin put the new gateway on the bridge at the next pod. Asked
    // alongside the install plan's facts, not after them.
    const [changes, p] = await Promise.all([installStep.plan(ctx), ctx.facts.ask({ addrs: linkAddresses.ask(CNI_BRIDGE) })]);
    for (const addr of staleBridgeAddresses(p.addrs.stdout, ctx.machine.podSubnet ?? '')) {
      changes.push({
        kind: 'exec',
        cmd: sh`ip addr del ${addr} dev ${CNI_BRIDGE}`,
        reason: `${CNI_BRIDGE} still has ${addr}, outside this worker's pod subnet ${ctx.machine.podSubnet}: new pods would get no network`,
      });
    }
    return changes;
  },
};
