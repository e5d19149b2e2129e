// npm run bench:scale -- issue 16: labs of 1+2, 1+32 and 1+100 machines on this host. For each: `lab
// up` (time, and the memory the machines use), full `hardway up` and no-op `hardway up` (medians of
// three), hardway's CPU and peak RSS, the machines' CPU and the tasks they started; each step alone
// on the converged lab (`up --only STEP`: round trips, fact requests and tasks per machine); at 1+32
// the manual parallel loop (bench/support/manual.ts) pushing the same files. Printed beside the
// issue's baseline and targets.
//
//   npm run bench:scale                      every size (1+100 loads the host for a while)
//   npm run bench:scale -- --size 3 --size 33 --full-runs 1
//   npm run bench:scale -- --size 101 --real-kubelets   (100 real kubelets: see below)
//   npm run bench:scale -- --size 33 --noop-only --baseline ../base   (only the no-op's cost: 5 runs
//        each of this checkout and of the checkout at ../base taking turns on one lab, printed
//        beside the speed issue's figures and targets; bench/support/noop-cost.ts)
//
// Needs root. Labs bench-s3 (10.240.120.0/24), bench-s33 (10.240.121.0/24), bench-s101
// (10.240.122.0/24), taken down at the end, on failure and on Ctrl-C. The binaries are the real
// ones: Debian's packages and the Kubernetes v1.20.2 server binaries `download --source debian`
// builds; except at 1+100, where the workers' kubelet and kube-proxy are the test stand-ins
// (test/fixtures/stand-ins: check the files their flags name, then sleep) unless --real-kubelets:
// a 1+2 cluster with the real ones took 0.95 GiB and 0.21 CPU-s per second at rest, which scaled
// to 100 workers is more than this shared 2-core host has. The API server, etcd,
// containerd, runc and the CNI plugins stay real; verify then finds no node (--ready-timeout 0).
import { copyFileSync, rmSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { remoteEntry } from '../src/commands/index.ts';
import { stepNames } from '../src/cli/entry.ts';
import { defaultLabPaths } from '../src/lab/names.ts';
import { ensureRootfs } from '../src/lab/rootfs.ts';
import { clisWithBaseline } from './support/clis.ts';
import { clearScratch, manualParallel, manualPushes, stage } from './support/manual.ts';
import { labCpuSeconds, labLastPids, labPssBytes, delta, memAvailable } from './support/machine-stats.ts';
import { askedPerMachine, spread } from './support/noop-profile.ts';
import { freshLab, labDir, labDown, prepareProject } from './support/project.ts';
import { pushedFiles, stepSeconds } from './support/push-log.ts';
import { bundleIsCurrent } from '../bin/source-stamp.mjs';
import { cliLoader, runTimed, secs, stopBench } from './support/run.ts';
import { printReport, type Measured, type StepAlone } from './support/scale-report.ts';
import { median, timedRun, type TimedUp } from './support/timed-up.ts';
import { measureNoopOnly } from './support/noop-only.ts';

const SCENARIOS = [
  { size: 3, name: 'bench-s3', subnet: '10.240.120.0/24', workers: 2, manual: false, alone: true },
  { size: 33, name: 'bench-s33', subnet: '10.240.121.0/24', workers: 32, manual: true, alone: false },
  { size: 101, name: 'bench-s101', subnet: '10.240.122.0/24', workers: 100, manual: false, alone: false },
] as const;
type Scenario = (typeof SCENARIOS)[number];
const UP = ['up', '--keep-going', '--json'];
const MANUAL_RUNS = 3;

/** The stand-in script of test/fixtures, put in place of these binaries in downloads/ at 1+100. */
const STAND_IN = new URL('../test/fixtures/stand-ins/stand-in.sh', import.meta.url).pathname;
const STOOD_IN = ['worker/kubelet', 'worker/kube-proxy'];

const started = new Map<string, string>();
const gib = (b: number) => `${(b / 2 ** 30).toFixed(2)} GiB`;
const log = (s: Scenario, line: string) => console.log(`  [1+${s.workers}] ${line}`);

async function measure(s: Scenario, fullRuns: number, reruns: number, standIns: boolean): Promise<Measured> {
  const up = standIns ? [...UP, '--ready-timeout', '0'] : UP;
  const dir = labDir(s.name);
  started.set(s.name, dir);
  const free0 = memAvailable();
  const lab = await freshLab(s.name, s.subnet, s.workers, dir);
  await new Promise((r) => setTimeout(r, 10_000)); // let the boots' page cache and first timers settle
  const labMem = { pss: labPssBytes(s.name), drop: free0 - memAvailable() };
  log(s, `lab up ${secs(lab.labUpSeconds)}; machines' PSS ${gib(labMem.pss)}, host MemAvailable down ${gib(labMem.drop)}`);
  await prepareProject(dir);
  // downloads/ holds hard links into the user cache: unlink first, or the copy writes the stand-in
  // through the link into the cached build (and every other project linked to it).
  if (standIns) for (const f of STOOD_IN) { rmSync(join(dir, 'downloads', f), { force: true }); copyFileSync(STAND_IN, join(dir, 'downloads', f)); }

  const fulls: TimedUp[] = [];
  for (let i = 0; i < fullRuns; i++) {
    if (i > 0) await freshLab(s.name, s.subnet, s.workers, dir); // every full push on new machines
    const f = await timedRun(dir, up);
    fulls.push(f);
    log(s, `full up ${i + 1}/${fullRuns}: ${secs(f.run.seconds)}, hardway CPU ${secs(f.cpu)}, peak RSS ${gib(f.peakRss)}${f.problems.length ? `, INCOMPLETE: ${f.problems.slice(0, 3).join('; ')}` : ''}`);
  }
  const clusterMem = { pss: labPssBytes(s.name), drop: free0 - memAvailable() };
  log(s, `after full up: machines' PSS ${gib(clusterMem.pss)}, host MemAvailable down ${gib(clusterMem.drop)}`);
  const pushOf = (f: TimedUp) => f.run.seconds - (stepSeconds(f.log).find((x) => x.step === 'verify')?.seconds ?? 0);

  // The machines' own background (kubelets, timers) over a quiet interval, subtracted below.
  const quiet = 10;
  const cpuQ = labCpuSeconds(s.name);
  const pidsQ = labLastPids(s.name);
  await new Promise((r) => setTimeout(r, quiet * 1000));
  const bgCpuPerS = [...delta(cpuQ, labCpuSeconds(s.name)).values()].reduce((a, b) => a + b, 0) / quiet;
  const bgTasksPerS = ([...delta(pidsQ, labLastPids(s.name)).values()].reduce((a, b) => a + b - 1, 0) / Math.max(1, pidsQ.size)) / quiet;

  const noops: TimedUp[] = [];
  for (let i = 0; i < reruns; i++) noops.push(await timedRun(dir, up, s.name));
  log(s, `no-op up: ${noops.map((r) => `${secs(r.run.seconds)} ("changed": ${r.summary.changed})`).join(', ')}`);
  const wide: TimedUp[] = [];
  if (s.workers + 1 > 10) {
    // The default --concurrency is 10: the same no-op with every machine at once, to see what the cap costs.
    wide.push(await timedRun(dir, [...up, '--concurrency', String(s.workers + 1)], s.name));
    log(s, `no-op up --concurrency ${s.workers + 1}: ${wide.map((r) => secs(r.run.seconds)).join(', ')}`);
  }

  const steps: StepAlone[] = [];
  for (const step of s.alone ? stepNames(remoteEntry('up').steps) : []) {
    const r = await timedRun(dir, [...up, '--only', step, '--concurrency', String(s.workers + 1)], s.name);
    const asked = askedPerMachine(r.log);
    // Tasks of the machines the step worked on, less what those machines start on their own.
    const own = [...asked.keys()].map((h) => (r.tasks.get(`${s.name}-${h}`) ?? 0) - bgTasksPerS * r.run.seconds);
    steps.push({
      step, seconds: r.run.seconds, stepSeconds: stepSeconds(r.log).find((x) => x.step === step)?.seconds ?? 0, cpu: r.cpu,
      machines: asked.size, trips: spread(asked, 'trips'), requests: spread(asked, 'requests'),
      tasksPerMachine: own.reduce((a, b) => a + b, 0) / Math.max(1, own.length),
      machineCpu: Math.max(0, r.machineCpu - bgCpuPerS * r.run.seconds),
      changed: r.summary.changed,
    });
  }
  log(s, `each step alone: ${steps.map((x) => `${x.step} ${secs(x.seconds)}`).join(', ')}`);

  let manual: number[] = [];
  if (s.manual) {
    const files = pushedFiles(fulls.at(-1)!.log);
    const pushes = manualPushes(files, lab.hosts);
    const stageDir = join(dir, 'manual-stage');
    await stage(lab.sshConfig, stageDir, pushes);
    for (let i = 0; i < MANUAL_RUNS; i++) {
      await clearScratch(lab.sshConfig, lab.hosts);
      manual.push(await manualParallel(lab.sshConfig, stageDir, pushes));
    }
    await clearScratch(lab.sshConfig, lab.hosts);
    log(s, `manual parallel loop: ${manual.map(secs).join(', ')} (${files.length} files)`);
  }
  await labDown(s.name);
  rmSync(dir, { recursive: true, force: true });
  started.delete(s.name);
  return {
    size: s.size, workers: s.workers, labUp: lab.labUpSeconds, labMem, clusterMem,
    fulls: fulls.map((f) => f.run.seconds), pushes: fulls.map(pushOf), fullCpu: median(fulls, (f) => f.run.seconds).cpu,
    peakRss: Math.max(...fulls.map((f) => f.peakRss), ...noops.map((f) => f.peakRss)),
    noop: median(noops, (r) => r.run.seconds), noops: noops.map((r) => r.run.seconds), noopChanged: Math.max(...noops.map((r) => r.summary.changed)),
    wide: wide.map((r) => r.run.seconds), bgCpuPerS, bgTasksPerS, steps, manual, standIns: standIns ? STOOD_IN : [],
    // With stand-in kubelets no node registers: verify's node check fails, as expected (said in the report).
    problems: [...fulls, ...noops].flatMap((r, i) => r.problems.filter((p) => !(standIns && p.startsWith('verify@server failed')))
      .map((p) => `run ${i + 1}: ${p}`)),
  };
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: {
    size: { type: 'string', multiple: true }, 'full-runs': { type: 'string', default: '3' }, reruns: { type: 'string' },
    'real-kubelets': { type: 'boolean' }, 'noop-only': { type: 'boolean' }, baseline: { type: 'string' },
  } });
  const noopOnly = values['noop-only'] === true;
  const clis = clisWithBaseline(values.baseline);
  const chosen = SCENARIOS.filter((s) => !values.size || values.size.includes(String(s.size)));
  const fullRuns = Number(values['full-runs']);
  // The speed targets are medians of 5; the full bench keeps its 3.
  const reruns = Number(values.reruns ?? (noopOnly ? 5 : 3));
  if (chosen.length === 0 || !(fullRuns >= 1) || !(reruns >= 1)) throw new Error('--size takes 3, 33 or 101; --full-runs and --reruns a whole number from 1');
  if (process.getuid?.() !== 0) throw new Error('bench:scale needs root (lab machines: systemd-nspawn, mounts, a bridge)');
  await ensureRootfs(defaultLabPaths(process.env).cacheRoot, (l) => console.log(`  ${l}`));
  // A stale bundle makes every run compile src/ through tsx first: build it, as npm ci would.
  if (!bundleIsCurrent(new URL('../', import.meta.url).pathname)) await runTimed(process.execPath, [new URL('../scripts/build.mjs', import.meta.url).pathname]);
  console.log(`CLI: ${cliLoader()}`);
  console.log(`bench:scale on ${process.version}, ${cpus().length} cores shared with other work: load ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  const stop = (sig: string) => {
    console.error(`\n${sig}: stopping, then taking the bench labs down ...`);
    stopBench.abort();
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
  const done: Measured[] = [];
  let noopsMet = true;
  try {
    for (const s of noopOnly ? chosen : []) {
      console.log(`lab ${s.name} (1 server + ${s.workers} workers): no-op cost only ...`);
      noopsMet = (await measureNoopOnly({ ...s, standIns: s.size === 101 && !values['real-kubelets'] }, reruns, clis, started)) && noopsMet;
    }
    for (const s of noopOnly ? [] : chosen) {
      console.log(`lab ${s.name} (1 server + ${s.workers} workers) ...`);
      done.push(await measure(s, fullRuns, reruns, s.size === 101 && !values['real-kubelets']));
      // Said as soon as a size is done: a later size can take long, or be stopped.
      printReport(done.slice(-1), fullRuns, reruns);
    }
  } catch (e) {
    if (!stopBench.signal.aborted) throw e;
  } finally {
    for (const [name, dir] of started) {
      await labDown(name).catch((e: Error) => console.error(`lab down ${name}: ${e.message}`));
      rmSync(dir, { recursive: true, force: true });
    }
  }
  if (stopBench.signal.aborted) {
    process.exitCode = 130;
    return;
  }
  if (noopOnly) {
    process.exitCode = noopsMet ? 0 : 1;
    return;
  }
  console.log('\nAll sizes:');
  process.exitCode = printReport(done, fullRuns, reruns) ? 0 : 1;
  console.log(`load average at the end: ${loadavg().map((l) => l.toFixed(2)).join(' ')}; CLI: ${cliLoader()}`);
}

await main();
