// What a hardway run asked of each machine, read from its run log: SSH round trips (each fact
// batch is one remote command whose answers are logged together in one synchronous loop; each `$`
// line is one more command) and fact requests (files stat'ed or read, probes). Steps are told
// apart by running them alone (`up --only STEP`): in one run, a step's checks after its plan (its
// verify hook) cannot be told from the next step's reads.

/** Per machine: remote commands and fact requests. */
export interface Asked {
  trips: number;
  requests: number;
}

const LINE = /^(\S+Z) (\S+): (.*)$/;
const FACT = /^(read|stat|probe \(exit|remember the SHA-256)/;
/** Lines of one batch share a millisecond or two; a new round trip takes longer than this. */
const BATCH_GAP_MS = 2;

/** Round trips and fact requests of every machine in a run log. */
export function askedPerMachine(logText: string): Map<string, Asked> {
  const asked = new Map<string, Asked>();
  const lastFact = new Map<string, number>();
  let previousHost = '';
  for (const line of logText.split('\n')) {
    const m = LINE.exec(line);
    if (!m) continue;
    const [, stamp, host, text] = m as unknown as [string, string, string, string];
    if (host === 'step' || host.startsWith('hardway')) continue;
    const t = Date.parse(stamp);
    const a = asked.get(host) ?? { trips: 0, requests: 0 };
    asked.set(host, a);
    if (FACT.test(text)) {
      a.requests++;
      const prev = lastFact.get(host);
      // Another machine's line in between: the loop that logs one batch had ended.
      if (prev === undefined || t - prev > BATCH_GAP_MS || previousHost !== host) a.trips++;
      lastFact.set(host, t);
    } else {
      if (text.startsWith('$ ')) a.trips++;
      lastFact.delete(host);
    }
    previousHost = host;
  }
  return asked;
}

/** Mean and max of a per-machine figure over the machines whose name passes `which`. */
export function spread(asked: Map<string, Asked>, key: keyof Asked, which: (host: string) => boolean = () => true): { mean: number; max: number; n: number } {
  const xs = [...asked].filter(([h]) => which(h)).map(([, a]) => a[key]);
  return { mean: xs.reduce((s, x) => s + x, 0) / Math.max(1, xs.length), max: xs.length ? Math.max(...xs) : 0, n: xs.length };
}
