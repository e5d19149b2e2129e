// The systemd side of a step: reload units when a unit file changed, enable services, restart a
// service only when one of its own inputs changed in this plan, start it when it is not running,
// and wait until it is really active (a failure shows the service's journal).
import { sh, type Command } from '../../shell.ts';
import type { ServiceState } from './inspect.ts';
import type { Change } from '../../engine/types.ts';
import { ANY } from '../../layout.ts';

/** A file a step manages and the services that must restart when it changes. */
export interface ServiceInput {
  path: string;
  services: string[];
}

/** Seconds a service may take to become active after a start or restart. */
export const ACTIVE_TIMEOUT_S = 90;

/** The service changes that follow the planned file changes, for the services this step owns. Pure. */
export function serviceChanges(states: Map<string, ServiceState>, services: readonly string[], inputs: ServiceInput[], planned: Change[]): Change[] {
  const changed = new Set(planned.flatMap((c) => (c.kind === 'put' ? [c.path] : [])));
  const out: Change[] = [...reloadChanges(states, planned)];
  for (const s of services) {
    const { enabled, active } = states.get(s) ?? { enabled: '', active: '' };
    if (enabled !== 'enabled') out.push({ kind: 'exec', cmd: enableService(s), reason: `${s} is ${enabled || 'not installed'}` });
    const why = inputs.filter((i) => i.services.includes(s) && changed.has(i.path)).map((i) => i.path);
    if (why.length > 0) {
      out.push({ kind: 'exec', cmd: startAndWait('restart', s), reason: `input changed: ${why.join(', ')}` });
    } else if (active !== 'active') {
      out.push({ kind: 'exec', cmd: startAndWait('start', s), reason: `${s} is ${active || 'not running'}` });
    }
  }
  return out;
}

/**
 * `systemctl daemon-reload` when a planned put changes the unit file of a unit systemd has loaded
 * (or of one whose state is unknown). A new unit file needs none: systemd (245 and later) loads a
 * unit it did not find before on first use, and startService reloads once if an older one says
 * "not found". A reload costs ~0.1-0.3 s of CPU (all units, all generators) on every machine.
 */
export function reloadChanges(states: Map<string, ServiceState>, planned: Change[]): Change[] {
  const units = planned.flatMap((c) => (c.kind === 'put' && c.path.startsWith(`${ANY.units}/`) ? [c.path] : []));
  const loaded = units.filter((p) => states.get(p.slice(ANY.units.length + 1).replace(/\.service$/, ''))?.loaded !== false);
  return loaded.length ? [{ kind: 'exec', cmd: sh`systemctl daemon-reload`, reason: `unit file changed: ${loaded.join(', ')}` }] : [];
}

/**
 * `systemctl enable --no-reload S`: enabling only links the unit into its targets for the next boot,
 * and a plain `enable` reloads all of systemd each time (generators and all: ~0.1 s of CPU per call);
 * a changed unit file already gets its own `daemon-reload` first.
 */
export function enableService(service: string): Command {
  return sh`systemctl enable --no-reload ${service}`;
}

/** `systemctl start|restart S`, then wait until S is active (verify checks later that it stayed up); else print its journal and fail. */
export function startAndWait(verb: 'start' | 'restart', service: string): Command {
  return sh`${startService(verb, service)} && ${waitActive(service)}`;
}

/**
 * `systemctl start|restart S`; if that fails, one daemon-reload and a second try (a systemd older
 * than 245 does not load a new unit file without one, see reloadChanges); a second failure prints
 * the service's journal and fails.
 */
export function startService(verb: 'start' | 'restart', service: string): Command {
  return sh`{ systemctl ${verb} ${service} || { systemctl daemon-reload && systemctl ${verb} ${service}; } || { journalctl -u ${service} -n 15 --no-pager -o cat >&2; exit 1; }; }`;
}

/** Waits until a service is active (polling every half second); on failure prints its journal and exits 1. */
export function waitActive(service: string, timeoutS = ACTIVE_TIMEOUT_S): Command {
  // One line, so plans and logs show it as one command.
  // A service that dies later is caught by `hardway verify` at the end of `up`; waiting here for it
  // to stay up would add seconds to every restart.
  return sh`for i in $(seq ${timeoutS * 2}); do systemctl is-active --quiet ${service} && exit 0; sleep 0.5; done; echo ${`${service} did not become active within ${timeoutS}s; its last log lines:`} >&2; journalctl -u ${service} -n 15 --no-pager -o cat >&2; exit 1`;
}

/** Restarts the running services whose inputs changed (files installed by another step). */
export function tryRestart(inputs: ServiceInput[], planned: Change[]): Change[] {
  const changed = new Set(planned.flatMap((c) => (c.kind === 'put' ? [c.path] : [])));
  const services = [...new Set(inputs.filter((i) => changed.has(i.path)).flatMap((i) => i.services))];
  if (services.length === 0) return [];
  // Only running services restart: on a fresh machine the units of later steps do not exist yet.
  const cmd = sh`for s in ${services}; do if systemctl is-active --quiet "$s"; then systemctl restart "$s" || exit 1; fi; done`;
  return [{ kind: 'exec', cmd, reason: `inputs changed for ${services.join(', ')} (restarted if running)` }];
}
