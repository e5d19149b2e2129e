// The manual baseline: the same pushes done the tutorial's way, with the system ssh and scp over
// the lab's ssh_config (strict host keys). Per machine: one `ssh mkdir -p` of every directory, one
// `scp` per destination directory with the files named as on the machine, then `ssh systemctl
// daemon-reload` and `ssh systemctl enable --now` of the units pushed there. Files land under a
// scratch directory (SCRATCH) so the cluster hardway built is not disturbed.
import { execFile, execFileSync } from 'node:child_process';
import { copyFileSync, linkSync, mkdirSync, statSync } from 'node:fs';
import { dirname, join, posix } from 'node:path';
import { promisify } from 'node:util';
import { sh } from '../../src/shell.ts';
import { pushedServices, type PushedFile } from './push-log.ts';
import { runTimed, stopBench, type Ran } from './run.ts';

const execFileP = promisify(execFile);

/** Where the baseline puts files on each machine (removed again after each run). */
export const SCRATCH = '/root/bench-manual';

/** What the manual loop does on one machine. */
export interface ManualPush {
  host: string;
  files: PushedFile[];
  services: string[];
}

/** Groups hardway's uploads by machine, in inventory order. */
export function manualPushes(files: PushedFile[], hosts: string[]): ManualPush[] {
  return hosts.map((host) => {
    const mine = files.filter((f) => f.host === host);
    return { host, files: mine, services: pushedServices(mine) };
  });
}

/**
 * Lays out STAGE/<host>/<path on the machine> with exactly the bytes hardway installed: binaries
 * hard-linked from downloads/, rendered files (configs, certificates, units) read back from the
 * machine in one `tar` (untimed preparation). Returns how many files were read back.
 */
export async function stage(sshConfig: string, stageDir: string, pushes: ManualPush[]): Promise<number> {
  let fetched = 0;
  for (const p of pushes) {
    const root = join(stageDir, p.host);
    mkdirSync(root, { recursive: true });
    for (const f of p.files.filter((x) => x.localFile)) {
      const target = join(root, f.path);
      mkdirSync(dirname(target), { recursive: true });
      try {
        linkSync(f.localFile!, target);
      } catch {
        copyFileSync(f.localFile!, target);
      }
    }
    const rendered = p.files.filter((x) => !x.localFile).map((x) => x.path.replace(/^\/+/, ''));
    if (rendered.length === 0) continue;
    const { stdout } = await execFileP('ssh', ['-F', sshConfig, p.host, sh`tar -C / -cf - -- ${rendered}`.text],
      { encoding: 'buffer', maxBuffer: 64 << 20, signal: stopBench.signal });
    execFileSync('tar', ['-C', root, '-xpf', '-'], { input: stdout });
    fetched += rendered.length;
    for (const f of p.files) {
      const size = statSync(join(root, f.path)).size;
      if (size !== f.bytes) throw new Error(`${p.host}:${f.path} has ${size} bytes now, the run log says ${f.bytes}: cannot stage the same file`);
    }
  }
  return fetched;
}

function check(r: Ran, host: string, what: string): void {
  if (r.code !== 0) throw new Error(`manual baseline on ${host}: ${what} failed (exit ${r.code}): ${r.stderr.trim()}`);
}

/** The tutorial's loop body for one machine: mkdir, scp per directory, daemon-reload, enable --now. */
export async function pushByHand(sshConfig: string, stageDir: string, p: ManualPush): Promise<void> {
  const ssh = (cmd: string) => runTimed('ssh', ['-F', sshConfig, p.host, cmd]);
  const dirs = [...new Set(p.files.map((f) => posix.dirname(f.path)))].sort();
  check(await ssh(sh`mkdir -p ${dirs.map((d) => SCRATCH + d)}`.text), p.host, 'mkdir');
  for (const d of dirs) {
    const local = p.files.filter((f) => posix.dirname(f.path) === d).map((f) => join(stageDir, p.host, f.path));
    check(await runTimed('scp', ['-F', sshConfig, '-q', ...local, `${p.host}:${SCRATCH}${d}/`]), p.host, `scp into ${d}`);
  }
  if (p.services.length > 0) {
    check(await ssh(sh`systemctl daemon-reload`.text), p.host, 'systemctl daemon-reload');
    check(await ssh(sh`systemctl enable --now ${p.services}`.text), p.host, 'systemctl enable --now');
  }
}

/** Removes the scratch directory from every machine (between runs; not timed). */
export async function clearScratch(sshConfig: string, hosts: string[]): Promise<void> {
  await Promise.all(hosts.map(async (h) => check(await runTimed('ssh', ['-F', sshConfig, h, sh`rm -rf ${SCRATCH}`.text]), h, 'rm scratch')));
}

/** (a) like the tutorial: one machine after the other. Returns wall seconds. */
export async function manualSequential(sshConfig: string, stageDir: string, pushes: ManualPush[]): Promise<number> {
  const t0 = performance.now();
  for (const p of pushes) await pushByHand(sshConfig, stageDir, p);
  return (performance.now() - t0) / 1000;
}

/** (b) one background loop per machine, then wait for all. Returns wall seconds. */
export async function manualParallel(sshConfig: string, stageDir: string, pushes: ManualPush[]): Promise<number> {
  const t0 = performance.now();
  await Promise.all(pushes.map((p) => pushByHand(sshConfig, stageDir, p)));
  return (performance.now() - t0) / 1000;
}
