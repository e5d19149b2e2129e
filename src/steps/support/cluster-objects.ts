// Reads of cluster objects with the admin kubeconfig on the first control-plane machine. kubectl is
// a large Go program whose start costs more than most of a no-op's other probes together, so the
// reads that plans and checks ask at the same time (the at-once round) share one kubectl.
import type { FactRequest, MergeableProbe, ProbeResult } from '../../engine/facts.ts';
import type { StepContext } from '../../engine/types.ts';
import { FailureError, PreconditionError } from '../../errors.ts';
import { localKubectl, waitApi } from './api.ts';
import { numberOption } from '../options.ts';
import { joinCommands, sh, type Command } from '../../shell.ts';

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
export function objectItems<T extends { items?: unknown[] }>(json: string): T[] {
  if (!json.trim()) return [];
  return json.split(/(?<=^\})\n(?=\{$)/m).flatMap((doc) => {
    const parsed = JSON.parse(doc) as T;
    return (parsed.items as T[] | undefined) ?? [parsed];
  });
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

/** `got` holds every field of `want` (objects may have more keys; lists must match item by item), as `kubectl diff` of an apply would find nothing. */
export function holdsFields(got: unknown, want: unknown): boolean {
  if (Array.isArray(want)) return Array.isArray(got) && got.length === want.length && want.every((w, i) => holdsFields(got[i], w));
  if (want !== null && typeof want === 'object') {
    if (got === null || typeof got !== 'object' || Array.isArray(got)) return false;
    return Object.entries(want).every(([k, v]) => holdsFields((got as Record<string, unknown>)[k], v));
  }
  return got === want;
}

/** What a plan learns of objects it keeps in the cluster: the live ones, or why it cannot read them yet (dry run only). */
export type LiveObjects<T> = { items: T[] } | { notYet: string };

/**
 * Reads `resources` from the first control plane's API for a plan: the API server's state and the
 * objects in one round trip (merged with the other plans' reads), waiting for /readyz once when the
 * server has just started. Without a running API server a real run fails (run `before` first);
 * a dry run says why it cannot read them yet.
 */
export async function readLiveObjects<T extends KubeObject>(ctx: StepContext, resources: readonly string[], before: string): Promise<LiveObjects<T>> {
  const [stateAnswer, liveAnswer] = await ctx.facts.batch([{ op: 'C', cmd: sh`systemctl is-active kube-apiserver 2>/dev/null; command -v kubectl >/dev/null || echo no-kubectl` }, getObjects(resources)]);
  const state = (stateAnswer as ProbeResult).stdout.trim();
  if (state !== 'active' && state !== 'activating') {
    if (ctx.options.dryRun) return { notYet: 'the API server is not running yet; applied once it answers' };
    throw new PreconditionError(`the API server is not running on ${ctx.machine.hostname} (kube-apiserver: ${state.split('\n').join(', ') || 'not installed'})`,
      `run "${before}" first`);
  }
  let live = liveAnswer as ProbeResult;
  if (live.code !== 0) {
    // Just started: wait for /readyz, then read the objects again.
    const timeoutS = ctx.options.dryRun ? 1 : numberOption(ctx.options, 'api-timeout');
    const up = await ctx.facts.query(waitApi(timeoutS));
    if (up.code !== 0) {
      if (ctx.options.dryRun) return { notYet: 'the API is not answering yet; applied once it does' };
      throw new PreconditionError(
        `the API server at https://127.0.0.1:${ctx.inventory.settings.apiPort} did not answer within ${timeoutS}s: ${up.stderr.trim().split('\n').pop()}`,
        'check "journalctl -u kube-apiserver" on the control-plane machine; rerun when it answers',
      );
    }
    const again = await ctx.facts.query(getObjectsCommand(resources));
    if (again.code !== 0) throw new FailureError(`cannot read ${resources.join(', ')} from the cluster: ${again.stderr.trim()}`);
    live = again;
  }
  return { items: objectItems<T>(live.stdout) };
}
