// From evidence to findings: every registered check on every machine, on the steps' plans and on
// the API's answer; then each finding another one explains (as the checks declare) told in that
// one's evidence; then the order a reader should take them in (most likely cause first). Pure, so
// recorded evidence is a test.
import type { Machine } from '../inventory.ts';
import type { ProbeRequest } from '../probes/probe.ts';
import type { AskOf, DoctorCheck, Judged } from './checks/check.ts';
import { CHECK_LIST, checkNamed } from './checks/index.ts';
import { fixText } from './fixes.ts';
import type { ApiEvidence, DoctorContext, Finding, MachineEvidence } from './types.ts';

/** Every finding, most likely cause first. */
export function diagnose(ctx: DoctorContext, evidence: MachineEvidence[], api: ApiEvidence): Finding[] {
  const byMachine = new Map(evidence.map((e) => [e.machine, e]));
  const asked = ctx.inventory.machines.flatMap((m) => {
    const ev = byMachine.get(m.hostname);
    return ev ? [{ m, ev }] : [];
  });
  const judged: Judged[] = [
    ...asked.flatMap(({ m, ev }) => machineFindings(ctx, m, ev)),
    ...asked.flatMap(({ m, ev }) => (ev.unreachable ? [] : CHECK_LIST.flatMap((c) => named(c, c.plans?.(ctx, m, ev.drift ?? []) ?? [])))),
    ...CHECK_LIST.flatMap((c) => named(c, (api.error ? c.apiDown?.(ctx, api) : c.api?.(ctx, api)) ?? [])),
  ];
  return sortFindings(ctx, fold(ctx, judged)).map((j) => ({ machine: j.machine, check: j.check, cause: j.cause, evidence: j.evidence, fix: fixText(j.fix, ctx.projectArgs) }));
}

/** A judge's findings, with its check's name. */
function named(c: DoctorCheck, found: Omit<Judged, 'check'>[]): Judged[] {
  return found.map((f) => ({ ...f, check: c.name }));
}

/** The findings of every check on one machine: from its answers, or about its not answering. */
function machineFindings(ctx: DoctorContext, m: Machine, ev: MachineEvidence): Judged[] {
  if (ev.unreachable) return CHECK_LIST.flatMap((c) => named(c, c.unreachable?.(ctx, m, ev.unreachable!) ?? []));
  const q: AskOf = { inventory: ctx.inventory, machine: m, rendered: Object.keys(ctx.rendered[m.hostname] ?? {}), testImages: ctx.testImages, dnsPods: ctx.dnsPods ?? [] };
  // Each answer read once, by the probe that asked it; a key the evidence does not hold has no answer.
  const parsed = new Map<string, unknown>();
  const answer = (key: string, req: ProbeRequest) => {
    if (!parsed.has(key)) parsed.set(key, ev.probes[key] === undefined ? undefined : req.parse(ev.probes[key]!));
    return parsed.get(key);
  };
  return CHECK_LIST.flatMap((c) => {
    if (!c.judge) return [];
    const answers = Object.fromEntries(Object.entries(c.asks?.(q) ?? {}).flatMap(([key, req]) => (req ? [[key, answer(key, req)]] : [])));
    return named(c, c.judge({ ctx, machine: m, answers, files: ev.files }));
  });
}

/** How finding `a` explains finding `b` (by what a's check declares it explains, or b's check declares explains it): its preference, 0 first; undefined when it does not. */
function explains(a: Judged, b: Judged): number | undefined {
  if (a === b || a.check === b.check) return undefined;
  const tiers = [checkNamed(a.check)?.explains?.[b.check]?.(a, b), checkNamed(b.check)?.explainedBy?.(a, b, (x, y) => explains(x, y) !== undefined)]
    .flatMap((t) => (t === true ? [0] : typeof t === 'number' ? [t] : []));
  return tiers.length ? Math.min(...tiers) : undefined;
}

/**
 * The findings no other one explains; each explained one is told (its check's note, or its
 * evidence) in the evidence of the first finding, as printed, that explains it by the rule it
 * prefers. Checks are taken in rank order, those judged from a machine's own answers first, then
 * those judged from the steps' plans and the API's answer (a drift goes into the CoreDNS finding
 * whose fix runs its step).
 */
function fold(ctx: DoctorContext, judged: Judged[]): Judged[] {
  const stage = (c: DoctorCheck) => (c.plans || c.api ? 1 : 0);
  const order = [...CHECK_LIST].sort((a, b) => stage(a) - stage(b) || a.rank - b.rank);
  let live = judged;
  for (const c of order) {
    for (const f of live.filter((x) => x.check === c.name)) {
      const candidates = sortFindings(ctx, live).flatMap((e) => {
        const tier = explains(e, f);
        return tier === undefined ? [] : [{ e, tier }];
      });
      if (candidates.length === 0) continue;
      const best = Math.min(...candidates.map((x) => x.tier));
      const by = candidates.find((x) => x.tier === best)!.e;
      by.evidence += `; ${c.note?.(f) ?? f.evidence}`;
      live = live.filter((x) => x !== f);
    }
  }
  return live;
}

/**
 * A finding's place: its check's rank (or the rank its check places it at: a CoreDNS pod that does
 * not run for a reason doctor does not know, no fix, is a symptom, placed with the pods).
 */
function rank(f: { check: string; fix: unknown }): number {
  const c = checkNamed(f.check);
  const as = c?.rankAs?.(f);
  return (as ? checkNamed(as) : c)?.rank ?? Infinity;
}

/** Most likely cause first: by check (CHECKS order), then by the machine's place in machines.txt. */
export function sortFindings<F extends { machine: string; check: string; fix: unknown }>(ctx: DoctorContext, findings: readonly F[]): F[] {
  const order = new Map(ctx.inventory.machines.map((m, i) => [m.hostname, i]));
  return [...findings].sort((a, b) => rank(a) - rank(b) || (order.get(a.machine) ?? 0) - (order.get(b.machine) ?? 0));
}
