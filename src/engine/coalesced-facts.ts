// Facts shared by plans that run at the same time on one machine: every batch asked within a few
// milliseconds of another goes out as one remote command, each distinct request once, and the
// mergeable probes of one kind (the steps' service states) as one probe for all.
import { encodeRequest, factsFrom, type FactRequest, type Facts, type FileFact, type MergeableProbe, type ProbeResult } from './facts.ts';

/** Thrown by a coalesced query: a plan that needs a command of its own (a wait) cannot be planned alongside the others. */
export class NotCoalescable extends Error {}

/** How long a batch waits for others to join it: plans reach their next batch after a few ms of local work. */
const GATHER_MS = 5;

/** Facts over `inner` whose batches are merged; `query` (a wait, stdin) is refused with NotCoalescable. */
export function coalescedFacts(inner: Facts): Facts {
  let pending: Array<{ asked: FactRequest[]; done: (a: Array<FileFact | ProbeResult>) => void; fail: (e: unknown) => void }> = [];
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
  const query: Facts['query'] = async (cmd) => {
    throw new NotCoalescable(`a plan needs a command of its own: ${cmd.text}`);
  };
  return factsFrom(batch, query, inner.remember);
}

/** Each mergeable probe mapped to the one probe of its key that asks for the union of their items. */
function mergeProbes(requests: FactRequest[]): Map<FactRequest, FactRequest> {
  const groups = new Map<string, { merge: MergeableProbe; members: FactRequest[] }>();
  for (const r of requests) {
    if (r.op !== 'C' || !r.merge) continue;
    const g = groups.get(r.merge.key) ?? { merge: r.merge, members: [] };
    g.members.push(r);
    groups.set(r.merge.key, g);
  }
  const out = new Map<FactRequest, FactRequest>();
  for (const { merge, members } of groups.values()) {
    if (members.length < 2) continue;
    const items = [...new Set(members.flatMap((m) => (m.op === 'C' && m.merge ? m.merge.items : [])))];
    const one: FactRequest = { op: 'C', cmd: merge.build(items) };
    for (const m of members) out.set(m, one);
  }
  return out;
}
