// Probes of systemd: service states (shared by every step asking at once; other units too),
// the API server's state, and the journal's last lines of services that are down.
import { ANY } from '../layout.ts';
import { sh, type Command } from '../shell.ts';
import { mergeableProbe, probe } from './probe.ts';

/** A systemd service's state: `enabled`/`disabled`/'' (no unit) and `active`/`inactive`/`failed`/... */
export interface ServiceState {
  enabled: string;
  active: string;
  /** systemd holds the unit in memory (LoadState other than not-found): a changed unit file needs a reload. */
  loaded: boolean;
  /** systemd says its unit file changed on disk since it was loaded (an earlier run stopped before its daemon-reload). */
  needsReload?: boolean;
  /** An earlier run wrote this service's restart-due marker and stopped before the restart (ANY.restartDue). */
  restartDue?: boolean;
  /**
   * systemd is about to start it again by itself (ActiveState activating, SubState auto-restart: it
   * exited and its Restart= holds it for RestartSec), as the controller manager and the scheduler
   * do for a few seconds after the API server they lead through restarted.
   */
  autoRestart?: boolean;
}

/**
 * One `systemctl show` for many services (one process, not two per service), then a
 * `RestartDue=S` line for each service whose restart-due marker exists (a shell test, no process).
 */
export function serviceStatesCommand(services: readonly string[]): Command {
  // A name with a dot is a unit of another kind (swap.target, whose mask worker-os checks): asked
  // in the same call, not by a `systemctl is-enabled` of its own.
  const show = sh`systemctl show -p Id -p UnitFileState -p ActiveState -p SubState -p LoadState -p NeedDaemonReload ${services.map(unitName)}`;
  return sh`${show}; for s in ${services}; do if [ -e ${ANY.restartDue}/"$s" ]; then echo; echo "RestartDue=$s"; fi; done; :`;
}

/** The systemd unit of a name serviceStates is asked: NAME.service, or the name itself when it has a kind (swap.target). */
const unitName = (s: string) => (s.includes('.') ? s : `${s}.service`);

/** Parses serviceStatesCommand's output, keyed by service name (no LoadState counts as loaded). */
export function parseServiceStates(text: string): Map<string, ServiceState> {
  const out = new Map<string, ServiceState>();
  const due = new Set([...text.matchAll(/^RestartDue=(.+)$/gm)].map((m) => m[1]!));
  for (const block of text.split(/\n\s*\n/)) {
    const props = Object.fromEntries(block.split('\n').filter((l) => l.includes('=')).map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]));
    if (!props.Id) continue;
    const name = props.Id.replace(/\.service$/, '');
    const state: ServiceState = { enabled: props.UnitFileState ?? '', active: props.ActiveState ?? '', loaded: props.LoadState !== 'not-found' };
    if (props.NeedDaemonReload === 'yes') state.needsReload = true;
    if (props.ActiveState === 'activating' && props.SubState === 'auto-restart') state.autoRestart = true;
    if (due.has(name)) state.restartDue = true;
    out.set(name, state);
  }
  return out;
}

/** The state of services, by name (every step's asked at once share one systemctl). */
export const serviceStates = mergeableProbe('service-states', serviceStatesCommand, (a) => parseServiceStates(a.stdout));

/** kube-apiserver's ActiveState, and `no-kubectl` on a line of its own when kubectl is not installed. */
export const apiServerState = probe('api-server-state', () => sh`systemctl is-active kube-apiserver 2>/dev/null; command -v kubectl >/dev/null || echo no-kubectl`, (a) => a.stdout.trim());

/**
 * The journal's last lines of each of `services` that is not active (`== NAME` then its lines):
 * one systemctl for every state, then a journalctl per service that is down.
 */
export const journalsOfDown = probe('journals-of-down', (services: readonly string[]) =>
  sh`set -- $(systemctl is-active ${services}); for s in ${services}; do [ "$1" = active ] || { echo "== $s"; journalctl -u "$s" -n 4 --no-pager -o cat 2>&1; }; shift; done; :`);

/** The journal's last `lines` lines of each of `services`, whatever its state (`== NAME` then its lines): for doctor's bundle. */
export const journalTails = probe('journal-tails', (services: readonly string[], lines: number) =>
  sh`for s in ${services}; do echo "== $s"; journalctl -u "$s" -n ${String(lines)} --no-pager -o short-iso 2>&1; done; :`);
