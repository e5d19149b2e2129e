// One step on one host: plan (reads only); in dry-run describe and stop; otherwise apply the
// changes in order, plan again (a non-empty second plan is an idempotency bug), then verify.
import { FailureError, isExpectedError, PreconditionError } from '../errors.ts';
import { ConnectError } from '../transport/errors.ts';
import { runsAs } from '../transport/types.ts';
import type { Inventory } from '../inventory.ts';
import type { Redactor } from '../ui/redact.ts';
import type { Change, HostContext, HostResult, Step, StepOptions } from './types.ts';
import type { Target } from './targets.ts';
import { describeChange } from './apply.ts';
import { mapLimit } from './fanout.ts';
import { FAST_HASH_MIN } from './facts.ts';
import { changeLines, planLines } from './describe.ts';
import type { EngineDeps, RunHosts } from './hosts.ts';
import type { AtOnce } from './plan-at-once.ts';

/** Result of one step on one host plus the lines to show for it. */
export interface HostOutcome {
  result: HostResult;
  details: string[];
  /** The step failed before changing anything (PreconditionError): later steps may still run here. */
  untouched?: boolean;
}

/**
 * Runs one step on one host and never throws: failures become a `failed` result with the reason.
 * `atOnce`: what the at-once plan (plan-at-once.ts) found; settled, nothing changes anywhere, so the
 * plan is empty and a verify or check it already ran ended as it says.
 */
export async function runStepOnHost(step: Step, target: Target, inventory: Inventory, options: StepOptions, deps: EngineDeps, hosts: RunHosts, atOnce?: AtOnce): Promise<HostOutcome> {
  const { runLog, redactor } = deps;
  const { host, work } = target;
  const log = deps.logger.host(host.name);
  let applied = 0;
  let details: string[] = [];
  const result = (status: HostResult['status'], error?: string): HostOutcome => ({
    result: { step: step.name, machine: host.name, status, changes: applied, ...(error !== undefined ? { error: redactor.redact(error) } : {}) },
    details: details.map((d) => redactor.redact(d)),
  });
  try {
    // Checks and actions do nothing under --dry-run (see their kinds): no connection either.
    if (options.dryRun && work.kind !== 'change') return result('unchanged');
    const settled = atOnce?.settled === true;
    const early = settled ? atOnce.outcome(step.name, host.name) : undefined;
    if (early && !early.ok) throw early.error;
    const open = await hosts(host);
    const { transport, facts } = open;
    const ctx: HostContext = { host: host.name, inventory, facts, options, log };
    if (work.kind === 'check') {
      if (!early) await work.check(ctx);
      return result('unchanged');
    }
    if (work.kind === 'action') {
      await work.run({ ...ctx, transport });
      return result('unchanged');
    }

    const changes = settled ? [] : open.route(await work.plan(ctx));
    registerSecrets(changes, redactor);
    runLog.write(`${step.name}: plan has ${changes.length} change(s)` + changes.map((c) => `\n  ${describeChange(c)}`).join(''), host.name);
    if (options.dryRun) {
      details = await planLines(changes, facts, host.name, (cmd) => runsAs(transport, cmd));
      applied = changes.length;
      return result(changes.length ? 'changed' : 'unchanged');
    }
    details = changeLines(changes);
    for (const batch of uploadBatches(changes)) {
      // Uploads next to each other are independent: they go in parallel over the one connection
      // (each is atomic on its own). Commands stay in order, and wait for the uploads before them.
      await mapLimit(batch, PARALLEL_UPLOADS, async (change) => {
        await open.apply(change);
        applied++;
      });
    }
    // The binaries just installed need not be hashed again by the re-plan: their digest is known.
    for (const c of changes) {
      if (c.kind === 'put' && !Buffer.isBuffer(c.content) && c.content.size >= FAST_HASH_MIN) facts.remember(c.path, c.content.sha256);
    }
    if (changes.length > 0) {
      const again = await work.plan(ctx);
      if (again.length > 0) {
        throw work.unconverged(changes, again) ?? new FailureError(
          `${step.name} is not idempotent on ${host.name}: after applying ${changes.length} change(s) a second plan still has ${again.length}:` +
            again.map((c) => `\n  ${describeChange(c)}`).join(''),
          'this is a bug in hardway; the run log has every command and its output',
        );
      }
    }
    if (!early) await work.verify({ ...ctx, applied: changes });
    return result(changes.length ? 'changed' : 'unchanged');
  } catch (e) {
    const hint = isExpectedError(e) && 'hint' in e && e.hint ? `\n  hint: ${e.hint}` : '';
    const message = (isExpectedError(e) ? e.message : (e as Error)?.message ?? String(e)) + hint;
    runLog.write(`${step.name} failed: ${(e as Error)?.stack ?? message}`, host.name);
    const failed = result('failed', message);
    if (e instanceof ConnectError) failed.result.unreachable = true;
    return { ...failed, untouched: e instanceof PreconditionError && applied === 0 };
  }
}

/** Uploads a machine takes at once (below the transport's channel cap). */
const PARALLEL_UPLOADS = 4;

/** Splits changes into runs that may go at once: each run of consecutive puts, and each exec alone. */
export function uploadBatches(changes: Change[]): Change[][] {
  const batches: Change[][] = [];
  for (const c of changes) {
    const last = batches[batches.length - 1];
    if (c.kind === 'put' && last && last[0]!.kind === 'put') last.push(c);
    else batches.push([c]);
  }
  return batches;
}

/** Secret contents are registered before anything is logged, so no log line can carry them. */
function registerSecrets(changes: Change[], redactor: Redactor): void {
  for (const c of changes) {
    if (!c.secret) continue;
    if (c.kind === 'put' && Buffer.isBuffer(c.content)) redactor.add(c.content);
    if (c.kind === 'exec' && c.stdin !== undefined) redactor.add(c.stdin);
  }
}
