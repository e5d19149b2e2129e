// Reads of cluster objects with the admin kubeconfig on the first control-plane machine. kubectl is
// a large Go program whose start costs more than most of a no-op's other probes together, so the
// reads that plans and checks ask at the same time (the at-once round) share one kubectl.
import type { FactRequest, MergeableProbe } from '../../engine/facts.ts';
import { localKubectl } from './api.ts';
import { sh, type Command } from '../../shell.ts';

/** Exit code of an object read where the machine has no kubectl. */
export const NO_KUBECTL = 127;

/**
 * `kubectl get RESOURCES -o json --ignore-not-found` for objects named TYPE/NAME (kubectl takes
 * several only in that form; a missing one is left out, not an error; exit NO_KUBECTL without
 * kubectl). Several objects answer as one List.
 */
export function getObjectsCommand(resources: readonly string[]): Command {
  return sh`command -v kubectl >/dev/null || { echo "kubectl not found" >&2; exit ${NO_KUBECTL}; }; ${localKubectl(sh`get ${[...resources]} -o json --ignore-not-found`, 10)}`;
}

/** The read of `resources` as a facts request that other reads asked at once merge into (one kubectl for all). */
export function getObjects(resources: readonly string[]): Extract<FactRequest, { op: 'C' }> {
  const merge: MergeableProbe = { key: 'cluster-objects', items: resources, build: getObjectsCommand };
  return { op: 'C', cmd: getObjectsCommand(resources), merge };
}

/** The items of a `kubectl get -o json` answer: a List's items, or the one object. */
export function objectItems<T extends { items?: T[] }>(json: string): T[] {
  if (!json.trim()) return [];
  const parsed = JSON.parse(json) as T;
  return parsed.items ?? [parsed];
}
