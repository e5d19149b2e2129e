// npm run bench:doctor -- `hardway doctor` on a healthy 1+2 lab cluster (real v1.20.2 binaries),
// beside issue 12's target: under 3 s. Also times a no-op `hardway up` on the same cluster (issue
// 10's target for 3 machines: under 2 s), since the cluster is there. Each figure is the median of
// RUNS runs, every run printed too; the host's load average is printed before and after, since the
// host is shared.
//
//   npm run bench:doctor
//   npm run bench:doctor -- --baseline ../base
//        also the doctor of the checkout at ../base (its bin/hardway.mjs) on the same lab: each round
//        runs doctor once with each CLI, the first of the pair alternating, so load and warm caches
//        fall on both alike; both medians and their ratio (this checkout / baseline) are printed
//        beside issue 35's bound of 1.3x. Each CLI runs doctor once, untimed, before the rounds.
//
// Needs root. Lab bench-doc (10.240.83.0/24), taken down at the end, on failure and on Ctrl-C.
import { existsSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { defaultLabPaths } from '../src/lab/names.ts';
import { ensureRootfs, rootfsPath } from '../src/lab/rootfs.ts';
import { clisWithBaseline, loaderOf, THIS_CLI, type Cli } from './support/clis.ts';
import { freshLab, labDir, labDown, prepareProject } from './support/project.ts';
import { hardway, mustSucceed, secs, stopBench, type Ran } from './support/run.ts';
import { median } from './support/timed-up.ts';

const LAB = { name: 'bench-doc', subnet: '10.240.83.0/24', workers: 2 };
const RUNS = 5;
const DOCTOR_TARGET_S = 3;
const NOOP_TARGET_S = 2;
/** Issue 35: healthy doctor within 1.3x of the baseline's, measured in the same run. */
const BASELINE_RATIO = 1.3;

const load = () => loadavg().map((l) => l.toFixed(2)).join(' ');
const each = (runs: Ran[]) => `(${runs.map((r) => r.seconds.toFixed(2)).join(', ')})`;

/** Doctor with CLI `cli` in DIR; this checkout's must find nothing, a baseline's findings are kept for the report (its figure is then not of a healthy run). */
async function doctorRun(cli: Cli, dir: string, findings: string[]): Promise<Ran> {
  const d = await hardway(['doctor'], { cwd: dir, entry: cli.entry });
  if (d.code === 0) return d;
  const what = `hardway doctor (${cli.name}) found problems on the healthy cluster (exit ${d.code})`;
  if (cli === THIS_CLI) throw new Error(`${what}:\n${d.stdout}${d.stderr}`);
  // Its first lines, the doctor's own timing left out so that the same finding reads the same.
  findings.push(`${what}: ${`${d.stdout}${d.stderr}`.replace(/ \(\d+\.\d s\)$/m, '').trim().split('\n').slice(0, 8).join(' | ')}`);
  return d;
}

async function main(): Promise<void> {
  let clis: Cli[];
  try {
    const { values } = parseArgs({ options: { baseline: { type: 'string' } } });
    clis = clisWithBaseline(values.baseline);
  } catch (e) {
    // A wrong command line: said in one line, exit 2, no lab started.
    console.error(`bench:doctor: ${(e as Error).message}`);
    process.exitCode = 2;
    return;
  }
  if (process.getuid?.() !== 0) throw new Error('bench:doctor needs root (lab machines: systemd-nspawn, mounts, a bridge)');
  const cache = defaultLabPaths(process.env).cacheRoot;
  if (!existsSync(rootfsPath(cache))) {
    console.log('warming the cache: building the root filesystem once (not timed) ...');
    await ensureRootfs(cache, (l) => console.log(`  ${l}`));
  }
  process.on('SIGINT', () => stopBench.abort());
  process.on('SIGTERM', () => stopBench.abort());
  console.log(`bench:doctor on ${process.version}, ${cpus().length} cores; load average ${load()}`);
  for (const c of clis) console.log(`  CLI ${c.name}: ${c.entry}, ${loaderOf(c)}`);
  const doctor = clis.map(() => [] as Ran[]);
  const noop: Ran[] = [];
  const findings: string[] = [];
  try {
    const lab = await freshLab(LAB.name, LAB.subnet, LAB.workers, labDir(LAB.name));
    console.log(`lab ${LAB.name} up in ${secs(lab.labUpSeconds)}; preparing the project (download, images, pki) ...`);
    await prepareProject(lab.dir);
    const up = mustSucceed(await hardway(['up', '--json'], { cwd: lab.dir }), 'hardway up');
    // Another version's first doctor may start or read what this one has not (connections, caches): once each, untimed.
    if (clis.length > 1) for (const c of clis) await doctorRun(c, lab.dir, findings);
    console.log(`full up in ${secs(up.seconds)}; timing ${RUNS} rounds of doctor (${clis.map((c) => c.name).join(', ')}) and a no-op up; load ${load()} ...`);
    for (let i = 0; i < RUNS; i++) {
      // Alternate which CLI goes first: a run just after another may find the machines' caches warm.
      const order = i % 2 === 0 ? clis.map((_, k) => k) : clis.map((_, k) => clis.length - 1 - k);
      const times: string[] = [];
      for (const k of order) {
        const d = await doctorRun(clis[k]!, lab.dir, findings);
        doctor[k]!.push(d);
        times.push(`${clis[k]!.name} ${d.seconds.toFixed(2)} s`);
      }
      const n = mustSucceed(await hardway(['up', '--json'], { cwd: lab.dir }), 'hardway up (no-op)');
      const changed = (JSON.parse(n.stdout) as { changed: number }).changed;
      if (changed !== 0) throw new Error(`a no-op up changed ${changed} thing(s)`);
      noop.push(n);
      console.log(`  round ${i + 1}/${RUNS}: doctor ${times.join(', ')}; no-op up ${n.seconds.toFixed(2)} s; load ${load()}`);
    }
  } finally {
    await labDown(LAB.name).catch((e: Error) => console.error(`lab down ${LAB.name}: ${e.message}`));
  }
  const d = doctor.map((runs) => median(runs, (r) => r.seconds));
  const n = median(noop, (r) => r.seconds);
  const rows = [
    ['figure (1+2 lab, real binaries)', `median of ${RUNS}`, 'every run', 'target'],
    ['hardway doctor, healthy cluster', secs(d[0]!.seconds), each(doctor[0]!), `< ${DOCTOR_TARGET_S} s (issue 12): ${d[0]!.seconds < DOCTOR_TARGET_S ? 'met' : 'MISSED'}`],
  ];
  if (clis.length > 1) {
    const ratio = d[0]!.seconds / d[1]!.seconds;
    rows.push([`hardway doctor, ${clis[1]!.name}`, secs(d[1]!.seconds), each(doctor[1]!), '']);
    rows.push(['doctor: this checkout / baseline', `${ratio.toFixed(2)}x`, `(${doctor[0]!.map((r, i) => (r.seconds / doctor[1]![i]!.seconds).toFixed(2)).join(', ')})`,
      `<= ${BASELINE_RATIO}x (issue 35): ${ratio <= BASELINE_RATIO ? 'met' : 'MISSED'}`]);
  }
  rows.push(['no-op hardway up', secs(n.seconds), each(noop), `< ${NOOP_TARGET_S} s (issue 10): ${n.seconds < NOOP_TARGET_S ? 'met' : 'MISSED'}`]);
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  for (const r of rows) console.log(r.map((cell, c) => cell.padEnd(widths[c]!)).join('  ').trimEnd());
  // Medians to two decimals for the ratio's own figures (the table rounds to one).
  if (clis.length > 1) console.log(`medians: this checkout ${d[0]!.seconds.toFixed(2)} s, baseline ${d[1]!.seconds.toFixed(2)} s; the ratio per round pairs the runs of one round`);
  // The same finding in every run is said once, with how many runs had it.
  for (const f of new Set(findings)) console.log(`NOTE, ${findings.filter((x) => x === f).length} run(s), the untimed first ones included: ${f}`);
  console.log(`load average after: ${load()}`);
}

main().catch((e: Error) => {
  console.error(stopBench.signal.aborted ? 'interrupted: the bench lab is down, no figures' : `bench:doctor failed: ${e.message}`);
  process.exitCode = stopBench.signal.aborted ? 130 : 1;
});
