// What a no-op `hardway up` costs on a converged lab, measured as issue "Speed" asks: wall time,
// hardway's own CPU, and each machine's CPU per no-op (its cgroup's CPU during the run less its rate
// at rest, read before and after the runs). With a baseline CLI (another checkout's
// bin/hardway.mjs) both take turns on the same lab, so load and cache effects fall on both alike.
import { cpus, loadavg } from 'node:os';
import type { Cli } from './clis.ts';
import { labCpuSeconds } from './machine-stats.ts';
import { secs } from './run.ts';
import { median, timedRun } from './timed-up.ts';

/** One no-op run's figures. */
interface NoopRun {
  wall: number;
  hardwayCpu: number;
  /** CPU seconds of each machine (nspawn unit -> seconds), its rest rate subtracted. */
  machineCpu: Map<string, number>;
  changed: number;
  problems: string[];
}

/** Every run of one CLI on one lab. */
export interface NoopCost {
  cli: Cli;
  runs: NoopRun[];
}

/** Seconds of rest measured before and after the runs. */
const REST_S = 10;

/** CPU per second each machine uses at rest, over REST_S seconds. */
async function restRate(lab: string): Promise<Map<string, number>> {
  const before = labCpuSeconds(lab);
  await new Promise((r) => setTimeout(r, REST_S * 1000));
  const after = labCpuSeconds(lab);
  return new Map([...after].map(([u, v]) => [u, (v - (before.get(u) ?? v)) / REST_S]));
}

/** `runs` no-op `up`s of each CLI in turn on lab `lab` (project DIR); the machines' rest rate is read before and after; `expected` problems are not counted. */
export async function measureNoops(lab: string, dir: string, args: string[], clis: Cli[], runs: number, log: (line: string) => void,
  expected: (problem: string) => boolean = () => false): Promise<NoopCost[]> {
  const rest0 = await restRate(lab);
  const raw = clis.map((cli) => ({ cli, runs: [] as { wall: number; hardwayCpu: number; cpu: Map<string, number>; changed: number; problems: string[] }[] }));
  for (let i = 0; i < runs; i++) {
    for (const c of raw) {
      const before = labCpuSeconds(lab);
      const r = await timedRun(c.cli.dir ?? dir, args, undefined, c.cli.entry);
      const after = labCpuSeconds(lab);
      const cpu = new Map([...after].map(([u, v]) => [u, v - (before.get(u) ?? v)]));
      c.runs.push({ wall: r.run.seconds, hardwayCpu: r.cpu, cpu, changed: r.summary.changed, problems: r.problems.filter((p) => !expected(p)) });
      log(`no-op ${i + 1}/${runs} (${c.cli.name}): ${secs(r.run.seconds)}, hardway CPU ${r.cpu.toFixed(2)} s, "changed": ${r.summary.changed}`);
    }
  }
  const rest1 = await restRate(lab);
  const rate = (u: string) => ((rest0.get(u) ?? 0) + (rest1.get(u) ?? 0)) / 2;
  return raw.map((c) => ({
    cli: c.cli,
    runs: c.runs.map((r) => ({ wall: r.wall, hardwayCpu: r.hardwayCpu, changed: r.changed, problems: r.problems,
      machineCpu: new Map([...r.cpu].map(([u, v]) => [u, Math.max(0, v - rate(u) * r.wall)])) })),
  }));
}

/** What the issue measured before this work, and its targets, for one lab size. */
export interface NoopBaseline {
  machines: number;
  today: { wall: string; workerCpu?: string; hardwayCpuPerMachine?: string };
  target: { wallS: number; workerCpuS?: number; hardwayCpuPerWorkerS?: number };
}

const med = (xs: number[]) => median(xs, (x) => x);
const each = (xs: number[], digits = 2) => `(${xs.map((x) => x.toFixed(digits)).join(', ')})`;

/** Prints each CLI's medians beside the issue's figures and targets; returns whether every target of this checkout was met. */
export function noopReport(lab: string, costs: NoopCost[], base: NoopBaseline, workerUnits: string[]): boolean {
  console.log(`\nno-op up on ${lab} (1+${base.machines - 1}), medians of ${costs[0]!.runs.length}; ${cpus().length} cores, load ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  console.log(`  the issue's "today": wall ${base.today.wall}${base.today.workerCpu ? `, worker CPU per no-op ${base.today.workerCpu}` : ''}` +
    `${base.today.hardwayCpuPerMachine ? `, hardway CPU per machine ${base.today.hardwayCpuPerMachine}` : ''}`);
  let ok = true;
  for (const c of costs) {
    const walls = c.runs.map((r) => r.wall);
    const hw = c.runs.map((r) => r.hardwayCpu);
    const perWorker = workerUnits.map((u) => med(c.runs.map((r) => r.machineCpu.get(u) ?? 0)));
    const server = [...(c.runs[0]?.machineCpu.keys() ?? [])].filter((u) => !workerUnits.includes(u));
    const serverCpu = server.map((u) => `${u.slice(lab.length + 1)} ${med(c.runs.map((r) => r.machineCpu.get(u) ?? 0)).toFixed(3)}`);
    const hwPerWorker = med(hw) / Math.max(1, workerUnits.length);
    const changed = Math.max(...c.runs.map((r) => r.changed));
    const problems = c.runs.flatMap((r) => r.problems);
    console.log(`  ${c.cli.name}:`);
    console.log(`    wall ${secs(med(walls))} ${each(walls)}; "changed": ${changed}${problems.length ? `; PROBLEMS: ${problems.slice(0, 3).join('; ')}` : ''}`);
    const workers = perWorker.length <= 4 ? perWorker.map((x) => x.toFixed(3)).join(', ') : `median ${med(perWorker).toFixed(3)}, max ${Math.max(...perWorker).toFixed(3)}`;
    console.log(`    CPU-s per no-op: each worker ${workers}; ${serverCpu.join(', ')}`);
    console.log(`    hardway CPU ${med(hw).toFixed(2)} s ${each(hw)}: ${(hwPerWorker * 1000).toFixed(0)} ms per worker`);
    if (c.cli !== costs[0]!.cli) continue;
    const judge = (what: string, value: number, target: number | undefined, unit: (x: number) => string) => {
      if (target === undefined) return;
      const met = value <= target;
      ok &&= met;
      console.log(`    target ${what} <= ${unit(target)}: ${met ? 'met' : 'MISSED'} (${unit(value)})`);
    };
    judge('wall', med(walls), base.target.wallS, secs);
    judge('CPU per worker (the highest median)', Math.max(...perWorker), base.target.workerCpuS, (x) => `${x.toFixed(3)} CPU-s`);
    judge('hardway CPU per worker', hwPerWorker, base.target.hardwayCpuPerWorkerS, (x) => `${(x * 1000).toFixed(0)} ms`);
    ok &&= changed === 0 && problems.length === 0;
  }
  return ok;
}

/** Sudo beside root on the same lab: each median as a ratio to root's; the issue's bound is 1.10 for the wall time. Returns whether it holds. */
export function sudoReport(sudo: NoopCost, root: NoopCost): boolean {
  const wall = (c: NoopCost) => med(c.runs.map((r) => r.wall));
  const cpu = (c: NoopCost) => med(c.runs.map((r) => r.hardwayCpu));
  const machines = (c: NoopCost) => med(c.runs.map((r) => [...r.machineCpu.values()].reduce((a, b) => a + b, 0)));
  const ratio = (f: (c: NoopCost) => number) => f(sudo) / Math.max(1e-9, f(root));
  const met = ratio(wall) <= 1.1;
  console.log(`  through sudo / as root, same lab, same runs in turn: wall ${ratio(wall).toFixed(2)}x (${secs(wall(sudo))} / ${secs(wall(root))}), ` +
    `hardway CPU ${ratio(cpu).toFixed(2)}x, every machine's CPU ${ratio(machines).toFixed(2)}x; target wall <= 1.10x: ${met ? 'met' : 'MISSED'}`);
  return met;
}
