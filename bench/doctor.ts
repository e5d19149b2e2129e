// npm run bench:doctor -- `hardway doctor` on a healthy 1+2 lab cluster (real v1.20.2 binaries),
// beside issue 12's target: under 3 s. Also times a no-op `hardway up` on the same cluster (issue
// 10's target for 3 machines: under 2 s), since the cluster is there. Each figure is the median of
// RUNS runs, every run printed too; the host's load average is printed before and after, since the
// host is shared.
//
// Needs root. Lab bench-doc (10.240.83.0/24), taken down at the end, on failure and on Ctrl-C.
import { existsSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { defaultLabPaths } from '../src/lab/names.ts';
import { ensureRootfs, rootfsPath } from '../src/lab/rootfs.ts';
import { freshLab, labDir, labDown, prepareProject } from './support/project.ts';
import { cliLoader, hardway, mustSucceed, secs, stopBench, type Ran } from './support/run.ts';
import { median } from './support/timed-up.ts';

const LAB = { name: 'bench-doc', subnet: '10.240.83.0/24', workers: 2 };
const RUNS = 5;
const DOCTOR_TARGET_S = 3;
const NOOP_TARGET_S = 2;

const load = () => loadavg().map((l) => l.toFixed(2)).join(' ');
const each = (runs: Ran[]) => `(${runs.map((r) => r.seconds.toFixed(2)).join(', ')})`;

async function main(): Promise<void> {
  if (process.getuid?.() !== 0) throw new Error('bench:doctor needs root (lab machines: systemd-nspawn, mounts, a bridge)');
  const cache = defaultLabPaths(process.env).cacheRoot;
  if (!existsSync(rootfsPath(cache))) {
    console.log('warming the cache: building the root filesystem once (not timed) ...');
    await ensureRootfs(cache, (l) => console.log(`  ${l}`));
  }
  process.on('SIGINT', () => stopBench.abort());
  process.on('SIGTERM', () => stopBench.abort());
  console.log(`bench:doctor on ${process.version}, ${cpus().length} cores, CLI from ${cliLoader()}; load average ${load()}`);
  const doctor: Ran[] = [];
  const noop: Ran[] = [];
  try {
    const lab = await freshLab(LAB.name, LAB.subnet, LAB.workers, labDir(LAB.name));
    console.log(`lab ${LAB.name} up in ${secs(lab.labUpSeconds)}; preparing the project (download, images, pki) ...`);
    await prepareProject(lab.dir);
    const up = mustSucceed(await hardway(['up', '--json'], { cwd: lab.dir }), 'hardway up');
    console.log(`full up in ${secs(up.seconds)}; timing ${RUNS} doctor runs and ${RUNS} no-op up runs ...`);
    for (let i = 0; i < RUNS; i++) {
      const d = await hardway(['doctor'], { cwd: lab.dir });
      if (d.code !== 0) throw new Error(`hardway doctor found problems on the healthy cluster (exit ${d.code}):\n${d.stdout}${d.stderr}`);
      doctor.push(d);
      const n = mustSucceed(await hardway(['up', '--json'], { cwd: lab.dir }), 'hardway up (no-op)');
      const changed = (JSON.parse(n.stdout) as { changed: number }).changed;
      if (changed !== 0) throw new Error(`a no-op up changed ${changed} thing(s)`);
      noop.push(n);
    }
  } finally {
    await labDown(LAB.name).catch((e: Error) => console.error(`lab down ${LAB.name}: ${e.message}`));
  }
  const d = median(doctor, (r) => r.seconds);
  const n = median(noop, (r) => r.seconds);
  const rows = [
    ['figure (1+2 lab, real binaries)', `median of ${RUNS}`, 'every run', 'target'],
    ['hardway doctor, healthy cluster', secs(d.seconds), each(doctor), `< ${DOCTOR_TARGET_S} s (issue 12): ${d.seconds < DOCTOR_TARGET_S ? 'met' : 'MISSED'}`],
    ['no-op hardway up', secs(n.seconds), each(noop), `< ${NOOP_TARGET_S} s (issue 10): ${n.seconds < NOOP_TARGET_S ? 'met' : 'MISSED'}`],
  ];
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  for (const r of rows) console.log(r.map((cell, c) => cell.padEnd(widths[c]!)).join('  '));
  console.log(`load average after: ${load()}`);
}

main().catch((e: Error) => {
  console.error(stopBench.signal.aborted ? 'interrupted: the bench lab is down, no figures' : `bench:doctor failed: ${e.message}`);
  process.exitCode = stopBench.signal.aborted ? 130 : 1;
});
