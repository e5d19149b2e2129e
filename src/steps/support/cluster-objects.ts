// What plans keep in the cluster's API, read with the other plans' reads (the cluster-objects
// probe, one kubectl on the first control plane): the live objects, whether they hold every field
// of what hardway applies, and the wait for an API server that has just started.
import type { StepContext } from '../../engine/types.ts';
import { FailureError, PreconditionError } from '../../errors.ts';
import { apiReady, clusterObjects, type KubeObject } from '../../probes/kubectl.ts';
import { apiServerState } from '../../probes/systemd.ts';
import { numberOption } from '../options.ts';

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
  const { state, objects } = await ctx.facts.ask({ state: apiServerState.ask(), objects: clusterObjects.ask(resources) });
  if (state !== 'active' && state !== 'activating') {
    if (ctx.options.dryRun) return { notYet: 'the API server is not running yet; applied once it answers' };
    throw new PreconditionError(`the API server is not running on ${ctx.machine.hostname} (kube-apiserver: ${state.split('\n').join(', ') || 'not installed'})`,
      `run "${before}" first`);
  }
  let live = objects;
  if (!live.ok) {
    // Just started: wait for /readyz, then read the objects again.
    const timeoutS = ctx.options.dryRun ? 1 : numberOption(ctx.options, 'api-timeout');
    const up = await ctx.facts.wait(apiReady.ask(timeoutS));
    if (!up.ok) {
      if (ctx.options.dryRun) return { notYet: 'the API is not answering yet; applied once it does' };
      throw new PreconditionError(
        `the API server at https://127.0.0.1:${ctx.inventory.settings.apiPort} did not answer within ${timeoutS}s: ${up.said}`,
        'check "journalctl -u kube-apiserver" on the control-plane machine; rerun when it answers',
      );
    }
    const { again } = await ctx.facts.ask({ again: clusterObjects.ask(resources) });
    if (!again.ok) throw new FailureError(`cannot read ${resources.join(', ')} from the cluster (kubectl exit ${again.code}${again.error ? `: ${again.error}` : ''})`);
    live = again;
  }
  return { items: live.items as T[] };
}
