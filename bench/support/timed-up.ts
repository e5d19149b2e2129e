// One `hardway up --json` run measured from outside: wall time, the CPU and peak RSS of the hardway
// process (GNU time), the CPU and tasks of the lab's machines over the same interval, and its run log.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { delta, labCpuSeconds, labLastPids } from './machine-stats.ts';
import { newLog, runLogs } from './project.ts';
import { HARDWAY, runTimed, type Ran } from './run.ts';
import { incomplete, parseSummary, type UpSummary } from './up-result.ts';

/** What one measured run gave. */
export interface TimedUp {
  run: Ran;
  summary: UpSummary;
  log: string;
  problems: string[];
  /** CPU seconds of the hardway process (user + system) and its peak RSS in bytes. */
  cpu: number;
  peakRss: number;
  /** CPU seconds used inside the machines during the run, all machines together. */
  machineCpu: number;
  /** Tasks (processes and threads) created inside each machine during the run (nspawn unit -> count). */
  tasks: Map<string, number>;
}

/** Runs `hardway ARGS` in DIR under GNU time (the CLI at `cli`, this checkout's by default); machine figures only when `lab` is given (the nsenter probes cost a little). */
export async function timedRun(dir: string, args: string[], lab?: string, cli = HARDWAY): Promise<TimedUp> {
  const before = runLogs(dir);
  const tmp = mkdtempSync(join(tmpdir(), 'hardway-time-'));
  const cpu0 = lab ? labCpuSeconds(lab) : new Map<string, number>();
  const pids0 = lab ? labLastPids(lab) : new Map<string, number>();
  try {
    const run = await runTimed('/usr/bin/time', ['-f', '%U %S %M', '-o', join(tmp, 'time'), process.execPath, cli, ...args], { cwd: dir });
    const [user, sys, maxKb] = readFileSync(join(tmp, 'time'), 'utf8').trim().split('\n').at(-1)!.split(' ').map(Number) as [number, number, number];
    const machineCpu = lab ? [...delta(cpu0, labCpuSeconds(lab)).values()].reduce((a, b) => a + b, 0) : 0;
    // The second probe's own `cat` is one task: not the run's.
    const tasks = new Map([...(lab ? delta(pids0, labLastPids(lab)) : new Map<string, number>())].map(([u, n]) => [u, n - 1]));
    const summary = parseSummary(run.stdout);
    const log = readFileSync(newLog(before, dir), 'utf8');
    const problems = incomplete(summary).map((r) => `${r.step}@${r.machine} ${r.status}${r.error ? `: ${r.error.split('\n')[0]}` : ''}`);
    return { run, summary, log, problems, cpu: user + sys, peakRss: maxKb * 1024, machineCpu, tasks };
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

/** The middle element by `key` (of an odd number of runs). */
export function median<T>(runs: T[], key: (x: T) => number): T {
  return [...runs].sort((a, b) => key(a) - key(b))[Math.floor(runs.length / 2)]!;
}
