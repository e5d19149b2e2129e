// Pod network routes: each machine reaches every other worker's pod subnet via that worker's IP,
// persisted as a oneshot unit that uses `ip route replace` (safe to rerun, restored on boot).
import type { Inventory, Machine } from '../inventory.ts';
import { ANY } from '../layout.ts';
import type { TemplateSet } from './templates.ts';
import type { RenderedFile } from './types.ts';

/** One route: a worker's pod subnet and the worker IP it is reached through. */
export interface PodRoute {
  subnet: string;
  via: string;
  worker: string;
}

/** The routes `machine` needs: every worker's subnet except its own. */
export function podRoutes(inv: Inventory, machine: Machine): PodRoute[] {
  return inv.workers
    .filter((w) => w.hostname !== machine.hostname)
    .map((w) => ({ subnet: w.podSubnet!, via: w.ip, worker: w.hostname }));
}

/** The pod routes `machine` needs that the live table lacks (a route of that subnet via another address counts as missing). */
export function missingPodRoutes(inv: Inventory, machine: Machine, live: readonly { dst: string; via?: string }[]): PodRoute[] {
  return podRoutes(inv, machine).filter((r) => !live.some((l) => l.dst === r.subnet && l.via === r.via));
}

/** The systemd service name of the routes unit (for restarts). */
export const ROUTES_SERVICE = ANY.routesUnit.replace(/^.*\//, '').replace(/\.service$/, '');

/** The routes unit for `machine`, or nothing when it needs no route (a lone worker). */
export function renderRoutes(inv: Inventory, machine: Machine, templates: TemplateSet): RenderedFile[] {
  const routes = podRoutes(inv, machine);
  if (routes.length === 0) return [];
  return [{
    path: ANY.routesUnit,
    content: templates.render('units/hardway-pod-routes.service.hbs', { routes }),
    mode: 0o644,
    step: 'routes',
    services: [ROUTES_SERVICE],
  }];
}
