// The no-op bench of bench:up and bench:scale (--noop-only): one lab, one full up, then the no-op's
// cost for each CLI in turn (bench/support/noop-cost.ts), printed beside the speed issue's figures.
import { copyFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { labUnits } from './machine-stats.ts';
import type { Cli } from './clis.ts';
import { measureNoops, noopReport, sudoReport, type NoopBaseline } from './noop-cost.ts';
import { rootTwin } from './root-twin.ts';
import { freshLab, labDir, labDown, prepareProject, setDns } from './project.ts';
import { secs } from './run.ts';
import { timedRun } from './timed-up.ts';

/** The speed issue's figures before the work and its targets, per lab size (no-op `up`). */
const NOOP_ISSUE: Record<number, NoopBaseline> = {
  3: { machines: 3, today: { wall: '2.5-2.9 s', workerCpu: '0.93-0.99 CPU-s', hardwayCpuPerMachine: '76-106 ms' }, target: { wallS: 1.0, workerCpuS: 0.12 } },
  9: { machines: 9, today: { wall: '(not measured by the issue)' }, target: { wallS: 4, workerCpuS: 0.12 } },
  33: { machines: 33, today: { wall: '15.1 s', hardwayCpuPerMachine: '76-106 ms' }, target: { wallS: 8, workerCpuS: 0.12, hardwayCpuPerWorkerS: 0.04 } },
  101: { machines: 101, today: { wall: '63.9 s (stand-in kubelets)' }, target: { wallS: 25 } },
};

/** The stand-in script of test/fixtures, put in place of the workers' kubelet and kube-proxy when `standIns`. */
const STAND_IN = new URL('../../test/fixtures/stand-ins/stand-in.sh', import.meta.url).pathname;
const STOOD_IN = ['worker/kubelet', 'worker/kube-proxy'];

/** One lab to measure. */
export interface NoopLab {
  size: number;
  name: string;
  subnet: string;
  workers: number;
  standIns: boolean;
  /** Made with --login-user: the no-op through sudo and as root (the same lab, root let in) take turns. */
  loginUser?: string;
}

/** Measures lab `s` (registered in `started` while it runs, for the caller's teardown); returns whether the targets were met. */
export async function measureNoopOnly(s: NoopLab, runs: number, clis: Cli[], started: Map<string, string>): Promise<boolean> {
  const log = (line: string) => console.log(`  [1+${s.workers}] ${line}`);
  const up = ['up', '--keep-going', '--json', ...(s.standIns ? ['--ready-timeout', '0'] : [])];
  const dir = labDir(s.name);
  started.set(s.name, dir);
  await freshLab(s.name, s.subnet, s.workers, dir, s.loginUser);
  await prepareProject(dir);
  // downloads/ holds hard links into the user cache: unlink first, or the copy writes through them.
  if (s.standIns) for (const f of STOOD_IN) { rmSync(join(dir, 'downloads', f), { force: true }); copyFileSync(STAND_IN, join(dir, 'downloads', f)); }
  if (s.standIns) {
    // Stand-in kubelets register no node and run no pod: CoreDNS could never start, and the dns
    // step would wait for it on every run. The add-on is turned off, said here and in the report.
    setDns(dir, false);
    log('stand-in kubelets: the cluster DNS add-on is turned off (dns.enabled: false), no pod can run');
  }
  const full = await timedRun(dir, up);
  // With stand-in kubelets no node registers: verify's node check fails, as expected.
  const expected = (p: string) => s.standIns && p.startsWith('verify@server failed');
  const problems = full.problems.filter((p) => !expected(p));
  if (problems.length) throw new Error(`full up on ${s.name} incomplete: ${problems.slice(0, 3).join('; ')}`);
  log(`full up ${secs(full.run.seconds)}`);
  // With a login user: this checkout through sudo, then as root on the same machines.
  const twin = s.loginUser ? await rootTwin(dir, s.loginUser) : undefined;
  const measured = twin ? [{ ...clis[0]!, name: `${s.loginUser} through sudo` }, { ...clis[0]!, name: 'root', dir: twin }] : clis;
  // Each CLI once before the timed runs: another version's first run may rewrite what it keeps on the machines.
  for (const c of measured) await timedRun(c.dir ?? dir, up, undefined, c.entry);
  const costs = await measureNoops(s.name, dir, up, measured, runs, log, expected);
  const workers = labUnits(s.name).filter((u) => u.startsWith(`${s.name}-node-`));
  let ok = noopReport(s.name, costs, NOOP_ISSUE[s.size]!, workers);
  if (twin) {
    ok = sudoReport(costs[0]!, costs[1]!) && ok;
    rmSync(twin, { recursive: true, force: true });
  }
  await labDown(s.name);
  rmSync(dir, { recursive: true, force: true });
  started.delete(s.name);
  return ok;
}
