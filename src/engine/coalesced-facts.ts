// Facts shared by plans that run at the same time on one machine: every batch asked within a few
// milliseconds of another goes out as one remote command, each distinct request once.
import { encodeRequest, factsFrom, type FactRequest, type Facts, type FileFact, type ProbeResult } from './facts.ts';

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
    const keys = new Map<string, number>();
    const unique: FactRequest[] = [];
    for (const w of waiting) {
      for (const r of w.asked) {
        const k = encodeRequest(r);
        if (!keys.has(k)) keys.set(k, unique.push(r) - 1);
      }
    }
    try {
      const answers = await inner.batch(unique);
      for (const w of waiting) w.done(w.asked.map((r) => answers[keys.get(encodeRequest(r))!]!));
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
