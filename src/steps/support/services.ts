// The systemd side of a step: reload units when a unit file changed, enable services, restart a
// service only when one of its own inputs changed in this plan, start it when it is not running,
// and wait until it is really active (a failure shows the service's journal).
import { sh, type Command } from '../../shell.ts';
import type { ServiceState } from './inspect.ts';
import type { Change } from '../../engine/types.ts';
import { ANY } from '../../layout.ts';
import { waitApiCommand } from '../../probes/api.ts';

/** A file a step manages and the services that must restart when it changes. */
export interface ServiceInput {
  path: string;
  services: string[];
}

/** Seconds a service may take to become active after a start or restart. */
export const ACTIVE_TIMEOUT_S = 90;

/**
 * A step's file changes with its service changes around them: before the files, a marker for
 * each running service the files will restart (so a run killed after a rename but before the
 * restart leaves the marker, and the rerun restarts the service though every file is right); after
 * them, serviceChanges.
 */
export function withServiceChanges(states: Map<string, ServiceState>, services: readonly string[], inputs: ServiceInput[], planned: Change[]): Change[] {
  const changed = changedPaths(planned);
  const due = services.filter((s) => states.get(s)?.active === 'active' && inputs.some((i) => i.services.includes(s) && changed.has(i.path)));
  // A daemon-reload must follow every unit file and precede every start: then all files go first.
  if (services.length < 2 || reloadChanges(states, planned, services).length > 0) {
    return [...markRestartsDue(due), ...planned, ...serviceChanges(states, services, inputs, planned)];
  }
  const perService = services.map((s) => ({ service: s, changes: changesOf(s, states.get(s), inputs, changed) }));
  return [...markRestartsDue(due), ...eachAfterItsInputs(planned, inputs, perService)];
}

/** The service changes that follow the planned file changes, for the services this step owns. Pure. */
export function serviceChanges(states: Map<string, ServiceState>, services: readonly string[], inputs: ServiceInput[], planned: Change[]): Change[] {
  const changed = changedPaths(planned);
  return [...reloadChanges(states, planned, services), ...services.flatMap((s) => changesOf(s, states.get(s), inputs, changed))];
}

/** Enable, then start or restart one service, as its state and its changed inputs require. */
function changesOf(s: string, state: ServiceState | undefined, inputs: ServiceInput[], changed: Set<string>): Change[] {
  const out: Change[] = [];
  const { enabled, active, restartDue, autoRestart } = state ?? { enabled: '', active: '' };
  if (enabled !== 'enabled') out.push({ kind: 'exec', cmd: enableService(s), reason: `${s} is ${enabled || 'not installed'}` });
  const why = inputs.filter((i) => i.services.includes(s) && changed.has(i.path)).map((i) => i.path);
  // The marker is cleared by the restart that honours it (and by one this run marked itself).
  const clear = restartDue || (why.length > 0 && active === 'active');
  if (why.length > 0) {
    out.push({ kind: 'exec', cmd: startAndWait('restart', s, clear), reason: `input changed: ${why.join(', ')}` });
  } else if (restartDue) {
    out.push({ kind: 'exec', cmd: startAndWait('restart', s, true), reason: `an earlier run installed new inputs of ${s} and stopped before restarting it` });
  } else if (active !== 'active' && !autoRestart) {
    // Why not one in auto-restart: systemd starts it within its RestartSec whatever the plan says
    // (a controller manager that lost its lease while the API server restarted exits, and comes
    // back 5 s later); a start planned for it would be a re-plan that is never empty. One that keeps
    // failing is verify's and doctor's to name.
    out.push({ kind: 'exec', cmd: startAndWait('start', s), reason: `${s} is ${active || 'not running'}` });
  }
  return out;
}

/**
 * The planned changes with each service's own changes right after its last input, in the order the
 * services are listed: the API server starts (and begins its long initialisation) while the
 * controller manager's and scheduler's binaries are still uploading. Changes that are no service's
 * input (kubectl, shared files) go first, with the first service's inputs.
 */
function eachAfterItsInputs(planned: Change[], inputs: ServiceInput[], perService: { service: string; changes: Change[] }[]): Change[] {
  const inputOf = (c: Change, s: string) => c.kind === 'put' && inputs.some((i) => i.path === c.path && i.services.includes(s));
  const owned = (c: Change) => perService.some((x) => inputOf(c, x.service));
  const out = planned.filter((c) => !owned(c));
  const placed = new Set<Change>(out);
  for (const { service, changes } of perService) {
    for (const c of planned) {
      if (!placed.has(c) && inputOf(c, service)) {
        out.push(c);
        placed.add(c);
      }
    }
    out.push(...changes);
  }
  return out;
}

/**
 * `systemctl daemon-reload` when a planned put changes the unit file of a unit systemd has loaded
 * (or of one whose state is unknown), or when systemd says the unit file of one of `services`
 * changed on disk since it loaded it (an earlier run stopped between the rename and the reload).
 * A new unit file needs none: systemd (245 and later) loads a unit it did not find before on first
 * use, and startService reloads once if an older one says "not found". A reload costs ~0.1-0.3 s of
 * CPU (all units, all generators) on every machine.
 */
export function reloadChanges(states: Map<string, ServiceState>, planned: Change[], services: readonly string[] = []): Change[] {
  const units = planned.flatMap((c) => (c.kind === 'put' && c.path.startsWith(`${ANY.units}/`) ? [c.path] : []));
  const loaded = units.filter((p) => states.get(p.slice(ANY.units.length + 1).replace(/\.service$/, ''))?.loaded !== false);
  if (loaded.length) return [{ kind: 'exec', cmd: sh`systemctl daemon-reload`, reason: `unit file changed: ${loaded.join(', ')}` }];
  const stale = services.filter((s) => states.get(s)?.needsReload);
  return stale.length ? [{ kind: 'exec', cmd: sh`systemctl daemon-reload`, reason: `systemd has not loaded the unit file on disk: ${stale.join(', ')}` }] : [];
}

/** Writes the restart-due marker of each service (see ANY.restartDue). */
function markRestartsDue(services: readonly string[]): Change[] {
  if (services.length === 0) return [];
  const files = services.map((s) => `${ANY.restartDue}/${s}`);
  return [{ kind: 'exec', cmd: sh`mkdir -p ${ANY.restartDue} && touch ${files}`, reason: `remember that ${services.join(', ')} must restart, should this run stop before it does` }];
}

/** The paths of the planned puts. */
function changedPaths(planned: Change[]): Set<string> {
  return new Set(planned.flatMap((c) => (c.kind === 'put' ? [c.path] : [])));
}

/**
 * `systemctl enable --no-reload S`: enabling only links the unit into its targets for the next boot,
 * and a plain `enable` reloads all of systemd each time (generators and all: ~0.1 s of CPU per call);
 * a changed unit file already gets its own `daemon-reload` first.
 */
export function enableService(service: string): Command {
  return sh`systemctl enable --no-reload ${service}`;
}

/**
 * `systemctl start|restart S`, then wait until S is active (verify checks later that it stayed up);
 * else print its journal and fail. With `clearDue`, S's restart-due marker is removed after the (re)start.
 */
export function startAndWait(verb: 'start' | 'restart', service: string, clearDue = false): Command {
  // The marker goes once systemd has (re)started the service: waitActive ends the shell with `exit`.
  if (!clearDue) return sh`${startService(verb, service)} && ${waitActive(service)}`;
  return sh`${startService(verb, service)} && rm -f ${`${ANY.restartDue}/${service}`} && ${waitActive(service)}`;
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

/**
 * Restarts the running services whose inputs changed (files installed by another step), marking
 * the running ones due before the files go in, as withServiceChanges does. A mark an earlier run
 * left is not acted on here but by the step that owns the service, which runs later and first puts
 * its own files right (restarting etcd here while its binary is still missing would fail).
 */
export function withRestarts(states: Map<string, ServiceState>, inputs: ServiceInput[], planned: Change[], opts: { apiTimeoutS?: number } = {}): Change[] {
  const changed = changedPaths(planned);
  // etcd first: the API server restarted after it finds its storage back at once.
  const services = [...new Set(inputs.filter((i) => changed.has(i.path)).flatMap((i) => i.services))]
    .sort((a, b) => Number(b === 'etcd') - Number(a === 'etcd'));
  if (services.length === 0) return planned;
  const running = services.filter((s) => states.get(s)?.active === 'active');
  // Only running services restart: on a fresh machine the units of later steps do not exist yet.
  const restart = sh`for s in ${services}; do if systemctl is-active --quiet "$s"; then systemctl restart "$s" || exit 1; fi; rm -f ${ANY.restartDue}/"$s"; done`;
  // A restarted API server must answer again before this machine is done (and, in a rolling
  // restart, before the next control-plane machine restarts its own).
  const api = services.includes('kube-apiserver') && opts.apiTimeoutS !== undefined;
  const cmd = api ? sh`${restart} && if systemctl is-active --quiet kube-apiserver; then ${waitApiCommand(opts.apiTimeoutS!)}; fi` : restart;
  const reason = `inputs changed for ${services.join(', ')} (restarted if running${api ? '; then the API server ready (/readyz)' : ''})`;
  return [...markRestartsDue(running), ...planned, { kind: 'exec', cmd, reason }];
}
