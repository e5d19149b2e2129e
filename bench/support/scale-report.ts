// The printed result of bench:scale: the issue's baseline table beside this run's figures, the
// targets met or missed (by how much), and where the no-op's time goes per step.
import { askedPerMachine, spread } from './noop-profile.ts';
import { stepSeconds } from './push-log.ts';
import { secs } from './run.ts';
import type { TimedUp } from './timed-up.ts';

/** One step run alone on a converged lab (`up --only STEP`). */
export interface StepAlone {
  step: string;
  /** Wall time of the whole command, and of the step as the engine logged it. */
  seconds: number;
  stepSeconds: number;
  /** CPU seconds of hardway, and of the machines (their background subtracted). */
  cpu: number;
  machineCpu: number;
  machines: number;
  trips: { mean: number; max: number };
  requests: { mean: number; max: number };
  tasksPerMachine: number;
  changed: number;
}

/** Everything measured on one lab size. */
export interface Measured {
  size: number;
  workers: number;
  labUp: number;
  /** Bytes: PSS of the machines' processes, and how far the host's MemAvailable went down. */
  labMem: { pss: number; drop: number };
  clusterMem: { pss: number; drop: number };
  fulls: number[];
  pushes: number[];
  fullCpu: number;
  peakRss: number;
  noop: TimedUp;
  noops: number[];
  noopChanged: number;
  /** No-op runs with --concurrency = machines. */
  wide: number[];
  bgCpuPerS: number;
  bgTasksPerS: number;
  steps: StepAlone[];
  manual: number[];
  /** Binaries of downloads/ replaced by the test stand-in for this size (empty: all real). */
  standIns: string[];
  problems: string[];
}

/** Issue 16's table, measured on main before this work (three runs each, after one full up). */
const BASELINE: Record<number, { labUp: string; full: string; noop: string }> = {
  3: { labUp: '4-7 s', full: '4.8 s', noop: '1.2 s' },
  33: { labUp: '34.5 s (inotify raised by hand)', full: '62.8 s', noop: '7.8-7.9 s' },
  101: { labUp: '108 s (inotify raised by hand), ~2 GB', full: '229.6 s', noop: '46.3-49.9 s' },
};
const NOOP_TARGET: Record<number, number> = { 3: 1, 101: 10 };

const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const each = (xs: number[]) => `(${xs.map((x) => x.toFixed(1)).join(', ')})`;
const gib = (b: number) => `${(b / 2 ** 30).toFixed(2)} GiB`;

function table(rows: string[][]): string[] {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  const line = (c: string[]) => c.map((x, i) => x.padEnd(widths[i]!)).join(' | ').trimEnd();
  return [line(rows[0]!), widths.map((w) => '-'.repeat(w)).join('-|-'), ...rows.slice(1).map(line)];
}

/** Prints the tables; returns true when every target of the sizes measured was met. */
export function printReport(done: Measured[], fullRuns: number, reruns: number): boolean {
  let met = true;
  const rows = [['lab', 'issue baseline: lab up / full up / no-op', 'lab up (machines\' memory)', `full up (median of ${fullRuns})`, `no-op up (median of ${reruns})`, 'hardway peak RSS']];
  for (const m of done) {
    const b = BASELINE[m.size]!;
    rows.push([`1+${m.workers}`, `${b.labUp} / ${b.full} / ${b.noop}`,
      `${secs(m.labUp)} (PSS ${gib(m.labMem.pss)}; MemAvailable ${gib(-m.labMem.drop)}; with the cluster: PSS ${gib(m.clusterMem.pss)}, MemAvailable ${gib(-m.clusterMem.drop)})`,
      `${secs(med(m.fulls))} ${each(m.fulls)}; without verify ${secs(med(m.pushes))}`,
      `${secs(m.noop.run.seconds)} ${each(m.noops)} "changed": ${m.noopChanged}${m.wide.length ? `; --concurrency ${m.workers + 1}: ${secs(med(m.wide))} ${each(m.wide)}` : ''}`,
      gib(m.peakRss)]);
  }
  console.log('');
  for (const l of table(rows)) console.log(l);
  console.log('');
  console.log('Targets:');
  for (const m of done) {
    const target = NOOP_TARGET[m.size];
    if (target !== undefined) {
      const ok = m.noop.run.seconds <= target && m.noopChanged === 0;
      met &&= ok;
      console.log(`  no-op up at 1+${m.workers} <= ${target} s: ${ok ? 'met' : `MISSED by ${secs(m.noop.run.seconds - target)} (${(m.noop.run.seconds / target).toFixed(1)}x)`} (${secs(m.noop.run.seconds)})`);
    }
    if (m.manual.length) {
      const ratio = med(m.fulls) / med(m.manual);
      const pushRatio = med(m.pushes) / med(m.manual);
      met &&= ratio <= 1.1;
      console.log(`  full up at 1+${m.workers} <= 1.1x manual parallel ${secs(med(m.manual))} ${each(m.manual)}: ${ratio <= 1.1 ? 'met' : 'MISSED'} ` +
        `(${ratio.toFixed(2)}x with verify's wait for Ready nodes; ${pushRatio.toFixed(2)}x without verify, as bench:up compares)`);
    }
    if (m.size === 101) {
      met &&= m.peakRss < 2 ** 30;
      console.log(`  hardway peak RSS at 1+${m.workers} < 1 GiB: ${m.peakRss < 2 ** 30 ? 'met' : 'MISSED'} (${gib(m.peakRss)})`);
    }
    if (m.problems.length) met = false;
  }
  for (const m of done) {
    if (m.standIns.length) {
      console.log(`  1+${m.workers}: ${m.standIns.join(' and ')} are the TEST STAND-INS (test/fixtures/stand-ins), not Kubernetes; everything else is real.`);
      console.log('    No node registers, so verify\'s node check fails at once (--ready-timeout 0); that failure is left out of the problems.');
    }
  }
  for (const m of done) printNoop(m);
  for (const m of done) for (const p of m.problems) console.log(`  1+${m.workers} PROBLEM: ${p}`);
  return met;
}

/** Where the median no-op's time goes: CPU on each side, round trips and tasks per machine, each step alone. */
function printNoop(m: Measured): void {
  const n = m.noop;
  const asked = askedPerMachine(n.log);
  const tasks = [...n.tasks.values()].map((t) => t - m.bgTasksPerS * n.run.seconds);
  const machines = m.workers + 1;
  console.log('');
  console.log(`1+${m.workers}, the median no-op up (${secs(n.run.seconds)}): hardway CPU ${secs(n.cpu)}; machines' CPU (sshd and what it ran, ` +
    `background of ${m.bgCpuPerS.toFixed(2)} CPU-s/s subtracted) ${secs(Math.max(0, n.machineCpu - m.bgCpuPerS * n.run.seconds))}; ` +
    `per machine ${spread(asked, 'trips').mean.toFixed(1)} SSH round trips (max ${spread(asked, 'trips').max}), ` +
    `${spread(asked, 'requests').mean.toFixed(0)} fact requests, ${(tasks.reduce((a, b) => a + b, 0) / Math.max(1, tasks.length)).toFixed(0)} tasks started (${machines} machines)`);
  console.log(`  steps in that run (wall s; control-plane and worker steps overlap): ${stepSeconds(n.log).map((x) => `${x.step} ${x.seconds.toFixed(1)}`).join(', ')}`);
  if (m.steps.length === 0) return;
  const rows = [['step alone (--only, --concurrency all)', 'wall', 'step', 'machines', 'round trips/machine', 'fact requests/machine', 'tasks/machine', 'hardway CPU', 'machines CPU']];
  for (const s of m.steps) {
    rows.push([s.step + (s.changed ? ` (changed ${s.changed}!)` : ''), secs(s.seconds), secs(s.stepSeconds), String(s.machines),
      `${s.trips.mean.toFixed(1)} (max ${s.trips.max})`, s.requests.mean.toFixed(0), s.tasksPerMachine.toFixed(0), secs(s.cpu), secs(s.machineCpu)]);
  }
  for (const l of table(rows)) console.log(`  ${l}`);
}
