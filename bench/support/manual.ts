// The manual baseline: the same pushes done the tutorial's way, with the system ssh and scp over
// the lab's ssh_config (strict host keys). Per machine: one `ssh mkdir -p` of every directory, one
// `scp` per destination directory with the files named as on the machine, then `ssh systemctl
// daemon-reload` and `ssh systemctl enable --now` of the units pushed there. Two ways:
// - files only: under a scratch directory (SCRATCH) beside the cluster hardway built, whose services
//   already run, so `enable --now` starts nothing;
// - in place, on freshly booted machines: the files where they belong, then what the tutorial runs to
//   make them work (the sysctls applied, the services started, the images imported after containerd,
//   and on the control plane the wait for the API server and the RBAC `kubectl apply`), so the loop
//   ends where hardway's push ends: every service running and the API answering.
import { execFile, execFileSync } from 'node:child_process';
import { copyFileSync, linkSync, mkdirSync, statSync } from 'node:fs';
import { dirname, join, posix } from 'node:path';
import { promisify } from 'node:util';
import { WORKER } from '../../src/layout.ts';
import { sh } from '../../src/shell.ts';
import { localKubectl, waitApiCommand } from '../../src/probes/api.ts';
import { RBAC_MANIFEST } from '../../src/steps/kubelet-rbac.ts';
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

/** Files only, under SCRATCH beside a running cluster; or in place on fresh machines, started as the tutorial does. */
export type ManualMode = 'files-only' | 'in-place';

/** Seconds the in-place loop waits for the API server (the tutorial's "kubectl cluster-info" until it answers). */
const API_WAIT_S = 180;

/** The tutorial's loop body for one machine: mkdir, scp per directory, daemon-reload, enable --now (in place: and what makes the files work). */
export async function pushByHand(sshConfig: string, stageDir: string, p: ManualPush, mode: ManualMode = 'files-only'): Promise<void> {
  const ssh = (cmd: string, what: string) => runTimed('ssh', ['-F', sshConfig, p.host, cmd]).then((r) => check(r, p.host, what));
  const root = mode === 'files-only' ? SCRATCH : '';
  const dirs = [...new Set(p.files.map((f) => posix.dirname(f.path)))].sort();
  await ssh(sh`mkdir -p ${dirs.map((d) => root + d)}`.text, 'mkdir');
  for (const d of dirs) {
    const local = p.files.filter((f) => posix.dirname(f.path) === d).map((f) => join(stageDir, p.host, f.path));
    check(await runTimed('scp', ['-F', sshConfig, '-q', ...local, `${p.host}:${root}${d}/`]), p.host, `scp into ${d}`);
  }
  if (mode === 'in-place') return startInPlace(ssh, p);
  if (p.services.length > 0) {
    await ssh(sh`systemctl daemon-reload`.text, 'systemctl daemon-reload');
    await ssh(sh`systemctl enable --now ${p.services}`.text, 'systemctl enable --now');
  }
}

/**
 * What the tutorial runs after copying, on a fresh machine: the pushed sysctl files applied, the
 * services enabled and started (containerd first where images are to be imported, then the image
 * archives into containerd's k8s.io namespace, then the rest), and where the API server runs: wait
 * until it answers, then apply the kubelet RBAC objects.
 */
async function startInPlace(ssh: (cmd: string, what: string) => Promise<void>, p: ManualPush): Promise<void> {
  const sysctls = p.files.filter((f) => f.path.startsWith('/etc/sysctl.d/')).map((f) => f.path);
  if (sysctls.length > 0) await ssh(sh`for f in ${sysctls}; do sysctl -q -p "$f" || exit 1; done`.text, 'sysctl -p');
  const images = p.files.filter((f) => f.path.startsWith(`${WORKER.imagesDir}/`)).map((f) => f.path);
  const first = images.length > 0 && p.services.includes('containerd') ? ['containerd'] : [];
  const rest = p.services.filter((s) => !first.includes(s));
  await ssh(sh`systemctl daemon-reload`.text, 'systemctl daemon-reload');
  if (first.length > 0) {
    await ssh(sh`systemctl enable --now ${first}`.text, 'systemctl enable --now containerd');
    await ssh(sh`for f in ${images}; do ${WORKER.bin}/ctr -n k8s.io images import "$f" >/dev/null || exit 1; done`.text, 'ctr images import');
  }
  if (rest.length > 0) await ssh(sh`systemctl enable --now ${rest}`.text, 'systemctl enable --now');
  if (p.services.includes('kube-apiserver')) {
    await ssh(sh`(${waitApiCommand(API_WAIT_S)})`.text, 'wait for the API server (/readyz)');
    await ssh(sh`printf %s ${RBAC_MANIFEST} | ${localKubectl(sh`apply -f -`)} >/dev/null`.text, 'kubectl apply (kubelet RBAC)');
  }
}

/** Fails unless every service the loop pushed is active on its machine (untimed: proof the in-place loop did the whole job). */
export async function checkRunning(sshConfig: string, pushes: ManualPush[]): Promise<void> {
  await Promise.all(pushes.filter((p) => p.services.length > 0).map(async (p) => {
    const r = await runTimed('ssh', ['-F', sshConfig, p.host, sh`systemctl is-active ${p.services}`.text]);
    if (r.code !== 0) throw new Error(`manual in-place loop on ${p.host}: not every service is active (${p.services.join(', ')}: ${r.stdout.trim().split('\n').join(', ')})`);
  }));
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
export async function manualParallel(sshConfig: string, stageDir: string, pushes: ManualPush[], mode: ManualMode = 'files-only'): Promise<number> {
  const t0 = performance.now();
  await Promise.all(pushes.map((p) => pushByHand(sshConfig, stageDir, p, mode)));
  return (performance.now() - t0) / 1000;
}
