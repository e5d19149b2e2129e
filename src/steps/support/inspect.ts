// One round trip per step and machine: the files a step manages (SHA-256, mode, owner), the state
// of its services, and any other probe of the registry it needs, asked in one facts batch.
import { changesForFile, type DesiredFile } from '../../engine/desired.ts';
import type { Answers, Facts, FileFact, ProbeResult } from '../../engine/facts.ts';
import type { Change } from '../../engine/types.ts';
import type { ProbeRequest } from '../../probes/probe.ts';
import { serviceStates, type ServiceState } from '../../probes/systemd.ts';

export type { ServiceState } from '../../probes/systemd.ts';

/** What one inspection found: the files, the services, and each probe's parsed answer by its key. */
export interface Inspection<T extends Record<string, ProbeRequest> = Record<string, never>> {
  files: Map<string, FileFact>;
  services: Map<string, ServiceState>;
  probes: Answers<T>;
}

/** Stats `paths`, reads the state of `services` and asks `probes`, all in one remote command. */
export async function inspect<T extends Record<string, ProbeRequest> = Record<string, never>>(facts: Facts, paths: string[], services: readonly string[] = [], probes: T = {} as T): Promise<Inspection<T>> {
  const keys = Object.keys(probes);
  // The service states may be answered together with other steps' (plans asked at once).
  const states = services.length ? [serviceStates.ask(services)] : [];
  const answers = await facts.batch([...paths.map((path) => ({ op: 'S' as const, path })), ...states, ...keys.map((k) => probes[k]!)]);
  const files = new Map(paths.map((p, i) => [p, answers[i] as FileFact]));
  let next = paths.length;
  const found = services.length ? states[0]!.parse(answers[next++] as ProbeResult) : new Map<string, ServiceState>();
  const results = Object.fromEntries(keys.map((k) => [k, probes[k]!.parse(answers[next++] as ProbeResult)])) as Answers<T>;
  return { files, services: found, probes: results };
}

/** The changes that make every desired file right, given an inspection that stat'ed them. */
export function fileChangesFrom(found: Pick<Inspection, 'files'>, desired: DesiredFile[]): Change[] {
  return desired.flatMap((d) => changesForFile(d, found.files.get(d.path)!));
}
