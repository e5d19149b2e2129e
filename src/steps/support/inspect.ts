// One round trip per step and machine: the files a step manages (SHA-256, mode, owner), the state
// of its services, and any other read-only probe it needs, asked in one facts batch.
import { changesForFile, type DesiredFile } from '../../engine/desired.ts';
import type { FactRequest, Facts, FileFact, ProbeResult } from '../../engine/facts.ts';
import type { Change } from '../../engine/types.ts';
import { isCommand, sh, type Command } from '../../shell.ts';
import { ANY } from '../../layout.ts';

/** What one inspection found. */
export interface Inspection {
  files: Map<string, FileFact>;
  services: Map<string, ServiceState>;
  probes: Record<string, ProbeResult>;
}

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
}

/** A probe of an inspection: a command, or a request that others asked at once may merge into (getObjects). */
export type InspectProbe = Command | Extract<FactRequest, { op: 'C' }>;

/** Stats `paths`, reads the state of `services` and runs `probes`, all in one remote command. */
export async function inspect(facts: Facts, paths: string[], services: readonly string[] = [], probes: Record<string, InspectProbe> = {}): Promise<Inspection> {
  const keys = Object.keys(probes);
  const probeRequest = (p: InspectProbe): FactRequest => (isCommand(p) ? { op: 'C', cmd: p } : p);
  // The service states may be answered together with other steps' (plans asked at once).
  const states: FactRequest[] = services.length ? [{ op: 'C', cmd: serviceStatesCommand(services), merge: { key: 'service-states', items: services, build: serviceStatesCommand } }] : [];
  const answers = await facts.batch([...paths.map((path) => ({ op: 'S' as const, path })), ...states, ...keys.map((k) => probeRequest(probes[k]!))]);
  const files = new Map(paths.map((p, i) => [p, answers[i] as FileFact]));
  let next = paths.length;
  const serviceStates = services.length ? parseServiceStates((answers[next++] as ProbeResult).stdout) : new Map<string, ServiceState>();
  const results = Object.fromEntries(keys.map((k) => [k, answers[next++] as ProbeResult]));
  return { files, services: serviceStates, probes: results };
}

/** The changes that make every desired file right, given an inspection that stat'ed them. */
export function fileChangesFrom(found: Inspection, desired: DesiredFile[]): Change[] {
  return desired.flatMap((d) => changesForFile(d, found.files.get(d.path)!));
}

/**
 * One `systemctl show` for many services (one process, not two per service), then a
 * `RestartDue=S` line for each service whose restart-due marker exists (a shell test, no process).
 */
export function serviceStatesCommand(services: readonly string[]): Command {
  const show = sh`systemctl show -p Id -p UnitFileState -p ActiveState -p LoadState -p NeedDaemonReload ${services.map((s) => `${s}.service`)}`;
  return sh`${show}; for s in ${services}; do if [ -e ${ANY.restartDue}/"$s" ]; then echo; echo "RestartDue=$s"; fi; done; :`;
}

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
    if (due.has(name)) state.restartDue = true;
    out.set(name, state);
  }
  return out;
}
