// Facts shared by plans that run at the same time on one machine: every batch asked within a few
// milliseconds of another goes out as one remote command, each distinct request once, and the
// mergeable probes of one name (the steps' service states) as one probe for all.
import { withItems, type ProbeRequest } from '../probes/probe.ts';
import { encodeRequest, factsFrom, type FactRequest, type Facts, type BatchAnswer } from './facts.ts';

/** Thrown by a coalesced wait: a plan that needs a wait of its own cannot be planned alongside the others. */
export class NotCoalescable extends Error {}

/** How long a batch waits for others to join it: plans reach their next batch after a few ms of local work. */
const GATHER_MS = 5;

/** Facts over `inner` whose batches are merged; a wait is refused with NotCoalescable. */
export function coalescedFacts(inner: Facts): Facts {
  let pending: Array<{ asked: FactRequest[]; done: (a: BatchAnswer[]) => void; fail: (e: unknown) => void }> = [];
  const flush = async () => {
    const waiting = pending;
    pending = [];
    const merged = mergeProbes(waiting.flatMap((w) => w.asked));
    const keyOf = (r: FactRequest) => encodeRequest(merged.get(r) ?? r);
    const keys = new Map<string, number>();
    const unique: FactRequest[] = [];
    for (const w of waiting) {
      for (const r of w.asked) {
        const k = keyOf(r);
        if (!keys.has(k)) keys.set(k, unique.push(merged.get(r) ?? r) - 1);
      }
    }
    try {
      const answers = await inner.batch(unique);
      for (const w of waiting) w.done(w.asked.map((r) => answers[keys.get(keyOf(r))!]!));
    } catch (e) {
      for (const w of waiting) w.fail(e);
    }
  };
  const batch: Facts['batch'] = (asked) => {
    if (asked.length === 0) return Promise.resolve([]);
    return new Promise((done, fail) => {
      if (pending.length === 0) setTimeout(() => void flush(), GATHER_MS);
      pending.push({ asked, done, fail });
    });
  };
  const wait: Facts['wait'] = async (req) => {
    throw new NotCoalescable(`a plan needs a wait of its own: ${req.probe}`);
  };
  return factsFrom(batch, wait, inner.remember);
}

/** Each mergeable probe mapped to the one request of its name that asks for the union of their items. */
function mergeProbes(requests: FactRequest[]): Map<FactRequest, FactRequest> {
  const groups = new Map<string, ProbeRequest[]>();
  for (const r of requests) {
    if (r.op !== 'P' || !r.merge) continue;
    groups.set(r.probe, [...(groups.get(r.probe) ?? []), r]);
  }
  const out = new Map<FactRequest, FactRequest>();
  for (const members of groups.values()) {
    if (members.length < 2) continue;
    const one = withItems(members[0]!, [...new Set(members.flatMap((m) => m.merge!.items))]);
    for (const m of members) out.set(m, one);
  }
  return out;
}
