// kubectl reads: probes of the cluster's objects, asked of the first control plane's API server with kubectl and
// the admin kubeconfig there. kubectl is a large Go program whose start costs more than most of a
// no-op's other probes together, so the reads that plans and checks ask at the same time (the
// at-once round) share one kubectl. Waits for the API and for a rollout are probes too.
import { sh, type Command } from '../shell.ts';
import { localKubectl, waitApiCommand } from '../steps/support/api.ts';
import { joinCommands } from '../shell.ts';
import { mergeableProbe, probe, waitProbe } from './probe.ts';

/** Exit code of an object read where the machine has no kubectl. */
export const NO_KUBECTL = 127;

/**
 * From this many Nodes on, they are read as one list instead of one GET each: kubectl asks for the
 * TYPE/NAME objects one after the other, and 100 of them took the API server 18 s (1+100 lab).
 */
export const NODE_LIST_FROM = 4;

/**
 * The namespace of every namespaced object a plan or a check reads (the cluster DNS add-on's):
 * one kubectl reads them all at once, and the cluster-wide objects it reads beside them ignore it.
 */
export const OBJECTS_NAMESPACE = 'kube-system';

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
    ...(named.length ? [localKubectl(sh`get ${named} -n ${OBJECTS_NAMESPACE} -o json --ignore-not-found`, 10)] : []),
    ...(listNodes ? [localKubectl(sh`get nodes -o json`, 10)] : []),
  ];
  return sh`command -v kubectl >/dev/null || { echo "kubectl not found" >&2; exit ${NO_KUBECTL}; }; ${joinCommands(gets, ' && ')}`;
}

/**
 * The items of a `kubectl get -o json` answer: a List's items, or the one object; of each document
 * when there are several (getObjectsCommand's two kubectl gets: kubectl starts and ends each
 * document with a brace alone on its line).
 */
export function objectItems<T extends { items?: unknown[] }>(json: string): T[] {
  if (!json.trim()) return [];
  return documents(json).flatMap((doc) => {
    const parsed = JSON.parse(doc) as T;
    return (parsed.items as T[] | undefined) ?? [parsed];
  });
}

/**
 * The documents of kubectl's JSON output: split where a line holding only `}` is followed by one
 * holding only `{`. Found with indexOf: a lookbehind regex over the node list (hundreds of KB at
 * 1+32) cost more than parsing it.
 */
function documents(json: string): string[] {
  const docs: string[] = [];
  let from = 0;
  for (let at = json.indexOf('}\n{'); at >= 0; at = json.indexOf('}\n{', at + 1)) {
    const lineStart = at === 0 || json[at - 1] === '\n';
    const lineEnd = at + 3 === json.length || json[at + 3] === '\n';
    if (!lineStart || !lineEnd) continue;
    docs.push(json.slice(from, at + 1));
    from = at + 2;
  }
  docs.push(json.slice(from));
  return docs;
}

/** A cluster object as `kubectl get -o json` gives it, as far as telling objects apart goes. */
export interface KubeObject {
  kind?: string;
  metadata?: { name?: string; namespace?: string };
  items?: KubeObject[];
}

/** The live object of that kind and name among `items`. */
export function findObject<T extends KubeObject>(items: readonly T[], kind: string, name: string): T | undefined {
  return items.find((o) => o.kind === kind && o.metadata?.name === name);
}

/** Objects named TYPE/NAME, the raw answer (read with objectItems; exit NO_KUBECTL without kubectl). Every plan's asked at once share one kubectl. */
export const clusterObjects = mergeableProbe('cluster-objects', getObjectsCommand, (a) => a);

/**
 * The read of clusterObjects asked on its own, for a check that waits for the cluster to settle
 * (nodes turning Ready) and asks again and again: a wait, so the at-once round leaves it to the
 * check's own step. Its first argument bounds it in seconds.
 */
export const clusterObjectsAgain = waitProbe('cluster-objects-again', (_timeoutS: number, resources: readonly string[]) => getObjectsCommand(resources));

/** `node/NAME` while the API lists that Node, nothing once it is gone (the raw answer: its exit code says whether the API answered, its stdout kubectl's error). */
export const nodeListed = probe('node-listed', (name: string) => sh`${localKubectl(sh`get node ${name} -o name --ignore-not-found`)} 2>&1`);

/** The pods of a namespace with a label (`kubectl get pods -o json`), the raw answer. */
export const podsLabelled = probe('pods-labelled', (namespace: string, label: string) => localKubectl(sh`get pods -n ${namespace} -l ${label} -o json`, 10));

/** Waits (up to its seconds) for the local API server's /readyz; says kubectl's last error when it gives up. */
export const apiReady = waitProbe('wait-api', (timeoutS: number) => sh`{ ${waitApiCommand(timeoutS)}; } 2>&1`);

/** Waits (up to its seconds) for a Deployment's rollout (`kubectl rollout status`); says why when it gives up. */
export const rolloutDone = waitProbe('wait-rollout', (timeoutS: number, deployment: string, namespace: string) =>
  sh`${localKubectl(sh`rollout status deployment/${deployment} -n ${namespace} --timeout=${`${timeoutS}s`}`, timeoutS + 10)} 2>&1`);
