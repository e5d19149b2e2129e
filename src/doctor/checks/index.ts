// The registry of doctor's checks: every check exported by the modules listed here, in rank order
// (most likely cause first). Everything else is derived from it: the order of the report, what
// doctor asks each machine (../batch.ts), the judging and the folding of findings into the ones that
// explain them (../diagnose.ts), the list of checks in doctor's --help. A new check in one of these
// modules is registered by being exported.
import type { DoctorCheck } from './check.ts';
import * as certs from './certs.ts';
import * as cluster from './cluster.ts';
import * as dataplane from './dataplane.ts';
import * as dns from './dns.ts';
import * as drift from './drift.ts';
import * as fn from './function.ts';
import * as machine from './machine.ts';
import * as pods from './pods.ts';
import * as registry from './registry.ts';

const MODULES = [certs, cluster, dataplane, dns, drift, fn, machine, pods, registry];

const isCheck = (v: unknown): v is DoctorCheck => typeof v === 'object' && v !== null && 'name' in v && 'rank' in v && typeof (v as DoctorCheck).rank === 'number';

type NamesIn<M> = { [K in keyof M]: M[K] extends DoctorCheck<infer N> ? N : never }[keyof M];

/** The name of a registered check (a finding's `check`). */
export type Check = (typeof MODULES)[number] extends infer M ? (M extends unknown ? NamesIn<M> : never) : never;

/** Every check, in rank order. */
export const CHECK_LIST: readonly DoctorCheck<Check>[] = MODULES.flatMap((m) => Object.values(m).filter(isCheck) as DoctorCheck<Check>[])
  .sort((a, b) => a.rank - b.rank);

/** Every check's name, most likely cause first: a finding's rank is its check's place here. */
export const CHECKS: readonly Check[] = CHECK_LIST.map((c) => c.name);

/** The check of this name. */
export function checkNamed(name: string): DoctorCheck | undefined {
  return CHECK_LIST.find((c) => c.name === name);
}
