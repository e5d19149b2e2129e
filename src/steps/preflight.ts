// preflight: before `up` changes anything on the machines, named checks of what hardway needs and
// cannot put right itself (./preflight/checks.ts), on every machine. Their probes ride the facts
// batch the other steps' plans ask at once, so a rerun that changes nothing costs no round trip
// more. A failed check says `[preflight NAME] on MACHINE: what is wrong; what to do`; one is
// skipped with --ignore-preflight NAME (or `all`), or preflight.ignore in cluster.yaml.
import type { Answers } from '../engine/facts.ts';
import type { CheckStep, StepContext } from '../engine/types.ts';
import { FailureError } from '../errors.ts';
import { ALL_PREFLIGHT } from '../preflight-names.ts';
import type { ProbeRequest } from '../probes/probe.ts';
import { listOption } from './options.ts';
import { PREFLIGHT, type AskedAt, type PreflightCheck } from './preflight/checks.ts';

/** The checks to run on a machine: those for its role, less the ones skipped by name (or all). */
export function preflightChecks(ctx: Pick<StepContext, 'inventory' | 'machine' | 'options'>): PreflightCheck[] {
  const skipped = new Set<string>([...listOption(ctx.options, 'ignore-preflight'), ...ctx.inventory.settings.preflight.ignore]);
  if (skipped.has(ALL_PREFLIGHT)) return [];
  return PREFLIGHT.filter((c) => !skipped.has(c.name) && c.appliesTo(ctx.machine));
}

/** The failed checks' lines, `[preflight NAME] on MACHINE: what is wrong; what to do`, from their answers. Pure. */
export function preflightLines(checks: readonly PreflightCheck[], answers: ReadonlyArray<Answers<Record<string, ProbeRequest>>>, ctx: Pick<StepContext, 'inventory' | 'machine'>, at: AskedAt): string[] {
  return checks.flatMap((c, i) => {
    const problem = c.judge(answers[i]!, { inventory: ctx.inventory, machine: ctx.machine, at });
    return problem ? [`[preflight ${c.name}] on ${ctx.machine.hostname}: ${problem.wrong}; ${problem.fix}`] : [];
  });
}

/** The preflight step. */
export const preflightStep: CheckStep = {
  kind: 'check',
  name: 'preflight',
  title: 'Preflight checks: systemd, ports, br_netfilter, clock, disk for etcd, cgroups, packages',
  targets: (inv) => inv.machines,
  async check(ctx: StepContext): Promise<void> {
    const checks = preflightChecks(ctx);
    if (checks.length === 0) return;
    // One ask for every check's probes (keyed by check), so they go out in one batch.
    const asked = checks.map((c) => c.asks(ctx.inventory, ctx.machine));
    const all = Object.fromEntries(asked.flatMap((a, i) => Object.entries(a).map(([k, req]) => [`${i}:${k}`, req])));
    const before = Date.now();
    const answers = await ctx.facts.ask(all);
    const at = { before, after: Date.now() };
    const byCheck = asked.map((a, i) => Object.fromEntries(Object.keys(a).map((k) => [k, answers[`${i}:${k}`]])));
    const lines = preflightLines(checks, byCheck, ctx, at);
    if (lines.length) {
      throw new FailureError(lines.join('\n'), 'skip a check that does not apply here with --ignore-preflight NAME (repeatable, or all), or preflight.ignore in cluster.yaml');
    }
  },
};
