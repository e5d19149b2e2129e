// routes: every machine reaches every other worker's pod subnet via that worker's IP (no overlay).
// Routes are set with `ip route replace` (safe to rerun), stale pod routes removed, and the set is
// persisted as a oneshot unit that replays it at every boot.
import type { Change, ChangeStep, StepContext } from '../engine/types.ts';
import { ANY } from '../layout.ts';
import { parseCidr, within, type Network } from '../net/ipv4.ts';
import { podRoutes, ROUTES_SERVICE, type PodRoute } from '../render/routes.ts';
import { joinCommands, sh } from '../shell.ts';
import { fileChangesFrom, inspect } from './support/inspect.ts';
import { renderedFor } from './support/rendered.ts';
import { routes as routeTable, type LiveRoute } from '../probes/network.ts';
import { enableService, reloadChanges, startService } from './support/services.ts';

/** The route changes that make the live table match `wanted` for pod subnets inside the cluster CIDR. */
export function routeChanges(live: LiveRoute[], wanted: PodRoute[], clusterCidr: string): Change[] {
  const cluster = (parseCidr(clusterCidr) as { ok: true; net: Network }).net;
  const inCluster = (dst: string) => {
    const r = parseCidr(dst);
    return r.ok && within(r.net, cluster);
  };
  const changes: Change[] = [];
  for (const r of live) {
    // Only gateway routes into the pod network are ours; the kernel's own `dev cni0` route is not.
    if (r.via && inCluster(r.dst) && !wanted.some((w) => w.subnet === r.dst && w.via === r.via)) {
      changes.push({ kind: 'exec', cmd: sh`ip route del ${r.dst} via ${r.via}`, reason: 'no worker has this pod subnet at that address any more' });
    }
  }
  for (const w of wanted) {
    if (!live.some((r) => r.dst === w.subnet && r.via === w.via)) {
      changes.push({ kind: 'exec', cmd: sh`ip route replace ${w.subnet} via ${w.via}`, reason: `pods of ${w.worker}` });
    }
  }
  return changes;
}

/**
 * The route changes as one command (`ip route ... && ip route ...`): a machine of a 9-machine
 * cluster needs 8 routes, and each command run on its own costs an SSH channel and a shell there.
 */
export function asOneCommand(changes: Change[]): Change[] {
  const cmds = changes.flatMap((c) => (c.kind === 'exec' ? [c.cmd] : []));
  if (cmds.length < 2 || cmds.length !== changes.length) return changes;
  return [{ kind: 'exec', cmd: joinCommands(cmds, ' && '), reason: changes.map((c) => c.reason).join('; ') }];
}

/** The routes step. */
export const routesStep: ChangeStep = {
  name: 'routes',
  title: "Route every worker's pod subnet via that worker, persisted across reboots",
  targets: (inv) => inv.machines,
  async plan(ctx: StepContext): Promise<Change[]> {
    const { inventory, machine, facts } = ctx;
    const wanted = podRoutes(inventory, machine);
    const { files } = renderedFor(inventory, machine, 'routes');
    const found = await inspect(facts, [ANY.routesUnit], [ROUTES_SERVICE], { routes: routeTable.ask() });
    const changes = asOneCommand(routeChanges(found.probes.routes, wanted, inventory.settings.clusterCidr));
    const { enabled, active } = found.services.get(ROUTES_SERVICE)!;
    if (wanted.length === 0) {
      if (found.files.get(ANY.routesUnit)!.exists) {
        changes.push({ kind: 'exec', cmd: sh`systemctl disable ${ROUTES_SERVICE} && rm -f ${ANY.routesUnit} && systemctl daemon-reload`, reason: 'this machine needs no pod routes' });
      }
      return changes;
    }
    const unitWork = fileChangesFrom(found, files);
    changes.push(...unitWork);
    changes.push(...reloadChanges(found.services, unitWork));
    if (enabled !== 'enabled') changes.push({ kind: 'exec', cmd: enableService(ROUTES_SERVICE), reason: 'replay the routes at boot' });
    // Started once so systemd knows the routes are up; the routes themselves were set above.
    if (active !== 'active') changes.push({ kind: 'exec', cmd: startService('start', ROUTES_SERVICE), reason: `${ROUTES_SERVICE} is ${active || 'inactive'}` });
    return changes;
  },
};
