// Reads of cluster objects with the admin kubeconfig on the first control-plane machine. kubectl is
// a large Go program whose start costs more than most of a no-op's other probes together, so the
// reads that plans and checks ask at the same time (the at-once round) share one kubectl.
import type { FactRequest, MergeableProbe } from '../../engine/facts.ts';
import { localKubectl } from './api.ts';
import { joinCommands, sh, type Command } from '../../shell.ts';

/** Exit code of an object read where the machine has no kubectl. */
export const NO_KUBECTL = 127;

/**
 * From this many Nodes on, they are read as one list instead of one GET each: kubectl asks for the
 * TYPE/NAME objects one after the other, and 100 of them took the API server 18 s (1+100 lab).
 */
export const NODE_LIST_FROM = 4;

/**
 * `kubectl get RESOURCES -o json --ignore-not-found` for objects named TYPE/NAME (kubectl takes
 * several only in that form; a missing one is left out, not an error; exit NO_KUBECTL without
 * kubectl). Several objects answer as one List. NODE_LIST_FROM or more `nodes/NAME` are read as
 * `kubectl get nodes` (every Node: the reader picks its own) after the others, in the same
 * command: its answer is then two JSON documents, which objectItems reads as one.
 */
export function getObjectsCommand(resources: readonly string[]): Command {
  const nodes = resources.filter((r) => r.startsWith('nodes/'));
  const listNodes = nodes.length >= NODE_LIST_FROM;
  const named = listNodes ? resources.filter((r) => !r.startsWith('nodes/')) : [...resources];
  const gets = [
    ...(named.length ? [localKubectl(sh`get ${named} -o json --ignore-not-found`, 10)] : []),
    ...(listNodes ? [localKubectl(sh`get nodes -o json`, 10)] : []),
  ];
  return sh`command -v kubectl >/dev/null || { echo "kubectl not found" >&2; exit ${NO_KUBECTL}; }; ${joinCommands(gets, ' && ')}`;
}

/** The read of `resources` as a facts request that other reads asked at once merge into (one kubectl for all). */
export function getObjects(resources: readonly string[]): Extract<FactRequest, { op: 'C' }> {
  const merge: MergeableProbe = { key: 'cluster-objects', items: resources, build: getObjectsCommand };
  return { op: 'C', cmd: getObjectsCommand(resources), merge };
}

/**
 * The items of a `kubectl get -o json` answer: a List's items, or the one object; of each document
 * when there are several (getObjectsCommand's two kubectl gets: kubectl starts and ends each
 * document with a brace alone on its line).
 */
export function objectItems<T extends { items?: T[] }>(json: string): T[] {
  if (!json.trim()) return [];
  return json.split(/(?<=^\})\n(?=\{$)/m).flatMap((doc) => {
    const parsed = JSON.parse(doc) as T;
    return parsed.items ?? [parsed];
  });
}
