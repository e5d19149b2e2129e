// The systemd side of a step: reload units when a unit file changed, enable services, restart a
// service only when one of its own inputs changed in this plan, start it when it is not running,
// and wait until it is really active (a failure shows the service's journal).
import { sh, type Command } from '../../shell.ts';
import type { Facts } from '../../engine/facts.ts';
import type { Change } from '../../engine/types.ts';
import { ANY } from '../../layout.ts';

/** A file a step manages and the services that must restart when it changes. */
export interface ServiceInput {
  path: string;
  services: string[];
}

/** Seconds a service may take to become active after a start or restart. */
export const ACTIVE_TIMEOUT_S = 90;

/** The service changes that follow the planned file changes, for the services this step owns. */
export async function serviceChanges(facts: Facts, services: readonly string[], inputs: ServiceInput[], planned: Change[]): Promise<Change[]> {
  const changed = new Set(planned.flatMap((c) => (c.kind === 'put' ? [c.path] : [])));
  const out: Change[] = [];
  if ([...changed].some((p) => p.startsWith(`${ANY.units}/`))) {
    out.push({ kind: 'exec', cmd: sh`systemctl daemon-reload`, reason: 'a unit file changed' });
  }
  if (services.length === 0) return out;
  const states = await facts.probe(
    Object.fromEntries(services.map((s) => [s, sh`echo "$(systemctl is-enabled ${s} 2>/dev/null) $(systemctl is-active ${s} 2>/dev/null)"`])),
  );
  for (const s of services) {
    const [enabled, active] = states[s]!.stdout.trim().split(/\s+/);
    if (enabled !== 'enabled') out.push({ kind: 'exec', cmd: sh`systemctl enable ${s}`, reason: `${s} is ${enabled || 'not installed'}` });
    const why = inputs.filter((i) => i.services.includes(s) && changed.has(i.path)).map((i) => i.path);
    if (why.length > 0) {
      out.push({ kind: 'exec', cmd: startAndWait('restart', s), reason: `input changed: ${why.join(', ')}` });
    } else if (active !== 'active') {
      out.push({ kind: 'exec', cmd: startAndWait('start', s), reason: `${s} is ${active || 'not running'}` });
    }
  }
  return out;
}

/** `systemctl start|restart S`, then wait until S is active and stays active; else print its journal and fail. */
export function startAndWait(verb: 'start' | 'restart', service: string): Command {
  return sh`systemctl ${verb} ${service} && ${waitActive(service)}`;
}

/** Waits until a service is active (and still active two seconds later); on failure prints its journal and exits 1. */
export function waitActive(service: string, timeoutS = ACTIVE_TIMEOUT_S): Command {
  return sh`s=${service}; i=0; while [ $i -lt ${timeoutS} ]; do
  if systemctl is-active --quiet "$s"; then sleep 2; systemctl is-active --quiet "$s" && exit 0; fi
  i=$((i + 1)); sleep 1
done
echo "$s did not stay active within ${timeoutS}s; its last log lines:" >&2
journalctl -u "$s" -n 15 --no-pager -o cat >&2
exit 1`;
}

/** `systemctl try-restart` for running services whose inputs changed (files installed by another step). */
export function tryRestart(inputs: ServiceInput[], planned: Change[]): Change[] {
  const changed = new Set(planned.flatMap((c) => (c.kind === 'put' ? [c.path] : [])));
  const services = [...new Set(inputs.filter((i) => changed.has(i.path)).flatMap((i) => i.services))];
  if (services.length === 0) return [];
  return [{ kind: 'exec', cmd: sh`systemctl try-restart ${services}`, reason: `inputs changed for ${services.join(', ')} (restarted only if running)` }];
}
