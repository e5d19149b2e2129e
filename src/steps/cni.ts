// cni: the CNI plugins and this worker's bridge network (its own pod subnet) and loopback configs.
// containerd reads them for every new pod sandbox, so nothing restarts.
import { REQUIRED_CNI_PLUGINS } from '../download/layout.ts';
import type { Change, ChangeStep, StepContext } from '../engine/types.ts';
import { contains, parseCidr, parseIPv4 } from '../net/ipv4.ts';
import { sh, type Command } from '../shell.ts';
import { WORKER } from '../layout.ts';
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

/**
 * Stops every pod sandbox containerd runs for Kubernetes (its pause task), so the kubelet makes each
 * pod's sandbox, and so its network, anew: `SandboxChanged`, the same pod with a new address.
 */
export function restartSandboxesCommand(): Command {
  return sh`PATH=$PATH:${WORKER.bin}; for s in $(ctr -n k8s.io containers ls -q ${'labels."io.cri-containerd.kind"==sandbox'}); do ctr -n k8s.io tasks kill -s SIGKILL "$s" 2>/dev/null || true; done`;
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
    const stale = staleBridgeAddresses(p.addrs.stdout, ctx.machine.podSubnet ?? '');
    for (const addr of stale) {
      changes.push({
        kind: 'exec',
        cmd: sh`ip addr del ${addr} dev ${CNI_BRIDGE}`,
        reason: `${CNI_BRIDGE} still has ${addr}, outside this worker's pod subnet ${ctx.machine.podSubnet}: new pods would get no network`,
      });
    }
    // The pods already there keep addresses of the old subnet, which no route leads to any more (and
    // with the old gateway gone, not even the kubelet's probes reach them): their sandboxes are
    // stopped, and the kubelet makes each pod's sandbox anew, in the new subnet.
    if (stale.length > 0) {
      changes.push({
        kind: 'exec',
        cmd: restartSandboxesCommand(),
        reason: `the pods on ${ctx.machine.hostname} have addresses of the old pod subnet: the kubelet makes their sandboxes anew in ${ctx.machine.podSubnet}`,
      });
    }
    return changes;
  },
};
