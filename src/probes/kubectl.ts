// kubectl reads: probes of the cluster's objects, asked of the first control plane's API server with kubectl and
// the admin kubeconfig there. kubectl is a large Go program whose start costs more than most of a
// no-op's other probes together, so the reads that plans and checks ask at the same time (the
// at-once round) share one kubectl. Waits for the API and for a rollout are probes too.
import { sh, type Command } from '../shell.ts';
import { localKubectl, waitApiCommand } from './api.ts';
import { joinCommands } from '../shell.ts';
import { mergeableProbe, probe, waitProbe, type ProbeAnswer } from './probe.ts';

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

/** A command's stdout when it succeeds; when it fails, its stderr instead (a probe's own stderr is dropped) and its exit code. */
const stderrOnFailure = (cmd: Command): Command => sh`{ err=$(${cmd} 2>&1 >&3); } 3>&1; rc=$?; [ "$rc" -eq 0 ] || printf '%s\\n' "$err"; exit "$rc"`;

/**
 * `kubectl get RESOURCES -o json --ignore-not-found` for objects named TYPE/NAME (kubectl takes
 * several only in that form; a missing one is left out, not an error; exit NO_KUBECTL without
 * kubectl). Several objects answer as one List. NODE_LIST_FROM or more `nodes/NAME` are read as
 * `kubectl get nodes` (every Node: the reader picks its own) after the others, in the same
 * command: its answer is then two JSON documents, which objectItems reads as one. When it fails, its
 * stdout is kubectl's error (stderrOnFailure), so the failure says why.
 */
export function getObjectsCommand(resources: readonly string[]): Command {
  const nodes = resources.filter((r) => r.startsWith('nodes/'));
  const listNodes = nodes.length >= NODE_LIST_FROM;
  const named = listNodes ? resources.filter((r) => !r.startsWith('nodes/')) : [...resources];
  const gets = [
    ...(named.length ? [localKubectl(sh`get ${named} -n ${OBJECTS_NAMESPACE} -o json --ignore-not-found`, 10)] : []),
    ...(listNodes ? [localKubectl(sh`get nodes -o json`, 10)] : []),
  ];
  return stderrOnFailure(sh`command -v kubectl >/dev/null || { echo "kubectl not found" >&2; exit ${NO_KUBECTL}; }; ${joinCommands(gets, ' && ')}`);
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

/**
 * Why the API could not be read: the exit code (NO_KUBECTL without kubectl on the machine; 1 when
 * the API refused over HTTPS, as kubectl exits then) and what was said (kubectl's words on the
 * probes that keep its error on stdout, the API's status over HTTPS).
 */
export interface ApiFailure {
  ok: false;
  code: number;
  error: string;
}

/** Objects read from the API (cluster-objects, pods-labelled): each with its kind, a missing one left out; or why they could not be read. */
export type ObjectsRead = { ok: true; items: KubeObject[] } | ApiFailure;

/** Whether the API lists a Node (node-listed), or why it could not be asked. */
export type NodeListed = { ok: true; listed: boolean } | ApiFailure;

/** How a wait for the API ended (wait-api, wait-rollout): done or not, and the last thing said (kubectl's last line, or the API's). */
export interface WaitEnd {
  ok: boolean;
  said: string;
}

/** The failure a non-zero kubectl exit reads as. */
const failure = (a: ProbeAnswer): ApiFailure => ({ ok: false, code: a.code, error: a.stdout.trim() });

/** A `kubectl get -o json` answer read once: its items, or the failure. */
export function readObjects(a: ProbeAnswer): ObjectsRead {
  return a.code === 0 ? { ok: true, items: objectItems<KubeObject>(a.stdout) } : failure(a);
}

/** The last line a wait's command said. */
const lastLine = (text: string) => text.trim().split('\n').pop() ?? '';

/** A wait's answer read once: done (exit 0) or not, with its last line. */
export function readWaitEnd(a: ProbeAnswer): WaitEnd {
  return { ok: a.code === 0, said: lastLine(a.stdout) };
}

/** Objects named TYPE/NAME (exit NO_KUBECTL without kubectl). Every plan's asked at once share one kubectl. */
export const clusterObjects = mergeableProbe('cluster-objects', getObjectsCommand, readObjects);

/**
 * The read of clusterObjects asked on its own, for a check that waits for the cluster to settle
 * (nodes turning Ready) and asks again and again: a wait, so the at-once round leaves it to the
 * check's own step. Its first argument bounds it in seconds.
 */
export const clusterObjectsAgain = waitProbe('cluster-objects-again', (_timeoutS: number, resources: readonly string[]) => getObjectsCommand(resources), readObjects);

/** Whether the API lists that Node (kubectl prints `node/NAME` while it does, nothing once it is gone; its error on the same stdout). */
export const nodeListed = probe('node-listed', (name: string) => sh`${localKubectl(sh`get node ${name} -o name --ignore-not-found`)} 2>&1`,
  (a): NodeListed => (a.code === 0 ? { ok: true, listed: a.stdout.trim() !== '' } : failure(a)));

/** The pods of a namespace with a label (`kubectl get pods -o json`); kubectl's error when it fails. */
export const podsLabelled = probe('pods-labelled', (namespace: string, label: string) => stderrOnFailure(localKubectl(sh`get pods -n ${namespace} -l ${label} -o json`, 10)), readObjects);

/** Waits (up to its seconds) for the local API server's /readyz; says kubectl's last error when it gives up. */
export const apiReady = waitProbe('wait-api', (timeoutS: number) => sh`{ ${waitApiCommand(timeoutS)}; } 2>&1`, readWaitEnd);

/** Waits (up to its seconds) for a Deployment's rollout (`kubectl rollout status`); says why when it gives up. */
export const rolloutDone = waitProbe('wait-rollout', (timeoutS: number, deployment: string, namespace: string) =>
  sh`${localKubectl(sh`rollout status deployment/${deployment} -n ${namespace} --timeout=${`${timeoutS}s`}`, timeoutS + 10)} 2>&1`, readWaitEnd);

/** kubectl on the jumpbox (doctor and its bundle): which kubectl, pki/'s jumpbox kubeconfig, and the first control plane's API server by address. */
export interface JumpboxKubectl {
  kubectl: string;
  kubeconfig: string;
  server: string;
}

/** The arguments before kubectl's verb on the jumpbox: its kubeconfig, the server by address (its certificate names it), a short timeout. */
export function jumpboxKubectlArgs(k: Omit<JumpboxKubectl, 'kubectl'>): string[] {
  return ['--kubeconfig', k.kubeconfig, `--server=${k.server}`, '--request-timeout=5s'];
}

/** kubectl's verb and arguments of doctor's lists: every Node, Pod, Deployment and Event in one List. */
export const API_LISTS_VERB = ['get', 'nodes,pods,deployments,events', '--all-namespaces', '-o', 'json'] as const;

/** Doctor's lists in one `kubectl get -o json`, asked on the jumpbox. */
export function apiListsCommand(k: JumpboxKubectl): Command {
  return stderrOnFailure(sh`${k.kubectl} ${[...jumpboxKubectlArgs(k), ...API_LISTS_VERB]}`);
}

/** Doctor's lists read once: their items, or why not (kubectl's last line on stderr; an answer that is not JSON said so). */
export function readApiLists(a: ProbeAnswer): ObjectsRead {
  if (a.code !== 0) return { ok: false, code: a.code, error: lastLine(a.stdout) || `exit ${a.code}` };
  try {
    const items = (JSON.parse(a.stdout) as { items?: unknown }).items;
    if (!Array.isArray(items)) throw new Error('it holds no list of items');
    return { ok: true, items: items as KubeObject[] };
  } catch (e) {
    // A kubectl that answers no JSON (a stand-in, a wrapper) is evidence too.
    return { ok: false, code: 0, error: `kubectl's answer is not JSON (${(e as Error).message})` };
  }
}

/** Doctor's every Node, Pod, Deployment and Event (of every namespace), asked on the jumpbox (src/cluster-api/ answers it over HTTPS first). */
export const apiLists = probe('api-lists', (k: JumpboxKubectl) => apiListsCommand(k), readApiLists);

/** What the bundle keeps of the cluster, as kubectl prints it for a person (`-o wide`: no object's spec, so no env value). */
export const BUNDLE_TABLES = {
  nodes: ['get', 'nodes', '-o', 'wide'],
  pods: ['get', 'pods', '--all-namespaces', '-o', 'wide'],
  events: ['get', 'events', '--all-namespaces', '--sort-by=.lastTimestamp'],
} as const;

/** A table kubectl printed for a person, or why not (its exit code and whole stderr). */
export type TableRead = { ok: true; text: string } | ApiFailure;

/** One of the bundle's tables, asked on the jumpbox (text for a person, read by no code: kubectl's route only). */
export const clusterTable = probe('cluster-table', (k: JumpboxKubectl, table: keyof typeof BUNDLE_TABLES) =>
  stderrOnFailure(sh`${k.kubectl} ${[...jumpboxKubectlArgs(k), ...BUNDLE_TABLES[table]]}`),
(a): TableRead => (a.code === 0 ? { ok: true, text: a.stdout } : { ok: false, code: a.code, error: a.stdout }));
