// Interruptions converge, measured: SIGKILL `hardway up` (and once `hardway certs`) at 20 points
// spread over every step that changes something, on the shared 1-server 2-worker lab
// (test/e2e/helpers/shared-lab.ts; it runs last there) with the real Kubernetes v1.20.2 binaries. Each point first gives its step work to do on one machine (a file
// altered or removed, a service stopped, pki/ files deleted), then starts the run and kills its
// whole process group the moment the run log (or, for pki/, which is made before the log opens, the
// pki file itself) shows the change the point aims at. Then, for every point:
//   - right after the kill: every installed file is either what it was before the run or exactly
//     the new bytes (never half a file), and every file of pki/ is a whole certificate, key or
//     kubeconfig;
//   - `hardway up` succeeds, and the next `hardway up --json` reports "changed": 0;
//   - every installed file has the SHA-256 of what hardway renders, downloads or keeps in pki/; no
//     upload temp file (.NAME.hardway-tmp-*) is left beside a target, nor a .*.tmp in pki/;
//   - every cluster service is active (none stopped that was running), no unit waits for a
//     daemon-reload, and no service runs since before one of its own inputs was last written (a
//     kill between a file's rename and its service's restart must not leave it running the old file);
//   - `hardway certs check` passes.
// A point that fails is repaired once its row is taken (stale services restarted, pki/ temp files
// removed, one more up if anything else was wrong), so each point starts from a converged cluster.
// It prints one table row per point and asserts 20 of 20. Run with `npm run test:kill`.
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import type { Lab } from '../e2e/helpers/lab.ts';
import { useSharedCluster } from '../e2e/helpers/shared-lab.ts';
import { Desired } from './desired.ts';
import { killAt, Machines, q, reuseLab, runJson, type Kill, type MachineState, type Trigger } from './kill-helpers.ts';

// HARDWAY_KILL_LAB_DIR=DIR reuses a lab made by `hardway lab up --name e2e-kill --dir DIR` (left up
// afterwards; download and build-images already done there), to rerun one point quickly with -t.
const reuse = process.env.HARDWAY_KILL_LAB_DIR;
const lab = reuse ? reuseLab(reuse) : useSharedCluster();

const ALTERED = '# altered by the kill test';
const TEMPLATE = '/etc/cloud/templates/hosts.debian.tmpl';

/** One kill point: the work it gives its step, the command it kills, and the line it kills at. */
interface Point {
  title: string;
  sabotage(l: Lab, machines: Machines): Promise<void>;
  trigger: Trigger;
  command?: 'certs';
  /** pki/ files the sabotage removed: the table says which were back when the process died. */
  pki?: string[];
}

const sh = (m: string, cmd: string) => async (_l: Lab, machines: Machines) => void (await machines.run(m, cmd));
/** Appends a comment to a file and restarts its service, so the service runs the file hardway must replace. */
const alterAndRestart = (m: string, path: string, service: string, unit = false) =>
  sh(m, `echo ${q(ALTERED)} >> ${path} && ${unit ? 'systemctl daemon-reload && ' : ''}systemctl restart ${service}`);
/** A pki point: these identities' certificate and key removed, the kill when the first file is back. */
const pkiPoint = (title: string, files: string[], command?: 'certs'): Point => ({
  title,
  pki: files,
  sabotage: async (l) => {
    for (const f of files) rmSync(join(l.dir, f), { force: true });
  },
  trigger: { pkiFile: files.find((f) => f.endsWith('.key'))! },
  ...(command ? { command } : {}),
});
const up = (host: string, step: string, log: RegExp, nth = 1): Trigger => ({ host, step, log, nth });

const POINTS: Point[] = [
  // Keys are written before their certificates, in the order of identitiesFor (admin, node-N, kube-proxy, ...).
  pkiPoint('pki: up rebuilding pki/ (admin, kube-proxy, kube-scheduler removed); killed when the first new key is in place',
    ['admin', 'kube-proxy', 'kube-scheduler'].flatMap((n) => [`pki/${n}.key`, `pki/${n}.crt`])),
  pkiPoint("pki: `hardway certs` (node-0's kubelet and kube-controller-manager removed); killed when the first new key is in place",
    ['pki/machines/node-0/kubelet.key', 'pki/machines/node-0/kubelet.crt', 'pki/kube-controller-manager.key', 'pki/kube-controller-manager.crt'], 'certs'),
  {
    title: "pin-hosts: node-1's pinned block gone from /etc/hosts and the cloud-init template; killed once /etc/hosts is renamed in",
    sabotage: sh('node-1', `sed -i '/^# BEGIN hardway/,/^# END hardway/d' /etc/hosts ${TEMPLATE}`),
    trigger: up('node-1', 'pin-hosts', /^uploaded \/etc\/hosts /),
  },
  {
    title: "distribute: the controller manager runs an altered kubeconfig; killed between the kubeconfig's rename and the restart",
    sabotage: alterAndRestart('server', '/var/lib/kubernetes/kube-controller-manager.kubeconfig', 'kube-controller-manager'),
    trigger: up('server', 'distribute', /^uploaded \/var\/lib\/kubernetes\/kube-controller-manager\.kubeconfig /),
  },
  {
    title: "distribute: node-1's kubelet certificate, key and kubeconfig removed; killed as the key's upload starts",
    sabotage: sh('node-1', 'rm -f /var/lib/kubelet/kubelet.crt /var/lib/kubelet/kubelet.key /var/lib/kubelet/kubeconfig'),
    trigger: up('node-1', 'distribute', /^upload \/var\/lib\/kubelet\/kubelet\.key /),
  },
  {
    title: 'bootstrap-etcd: etcd removed from the server; killed in the middle of its upload',
    sabotage: sh('server', 'rm -f /usr/local/bin/etcd'),
    trigger: up('server', 'bootstrap-etcd', /^upload \/usr\/local\/bin\/etcd /),
  },
  {
    title: "bootstrap-etcd: etcd runs an altered unit; killed between the unit's rename and daemon-reload/restart",
    sabotage: alterAndRestart('server', '/etc/systemd/system/etcd.service', 'etcd', true),
    trigger: up('server', 'bootstrap-etcd', /^uploaded \/etc\/systemd\/system\/etcd\.service /),
  },
  {
    // Not kube-apiserver (110 MB): its restart makes the rerun wait a minute or more for the API here.
    title: 'bootstrap-control-plane: kube-controller-manager (104 MB) removed; killed in the middle of its upload',
    sabotage: sh('server', 'rm -f /usr/local/bin/kube-controller-manager'),
    trigger: up('server', 'bootstrap-control-plane', /^upload \/usr\/local\/bin\/kube-controller-manager /),
  },
  {
    title: 'bootstrap-control-plane: kube-scheduler stopped; killed as its start is sent',
    sabotage: sh('server', 'systemctl stop kube-scheduler'),
    trigger: up('server', 'bootstrap-control-plane', /^\$ .*systemctl start kube-scheduler/),
  },
  {
    title: "bootstrap-control-plane: the scheduler runs an altered config; killed between the config's rename and the restart",
    sabotage: alterAndRestart('server', '/etc/kubernetes/config/kube-scheduler.yaml', 'kube-scheduler'),
    trigger: up('server', 'bootstrap-control-plane', /^uploaded \/etc\/kubernetes\/config\/kube-scheduler\.yaml /),
  },
  {
    title: 'kubelet-rbac: the API-server-to-kubelet binding deleted; killed as its apply is sent (server-side from the jumpbox, else kubectl apply)',
    sabotage: sh('server', 'kubectl --kubeconfig=/var/lib/kubernetes/admin.kubeconfig delete clusterrolebinding system:kube-apiserver-to-kubelet'),
    trigger: up('server', 'kubelet-rbac', /^(\$ kubectl .* apply -f -|api: apply clusterrole\/)/),
  },
  {
    title: "worker-os: node-0's sysctl and modules-load files removed; killed after the sysctl file's rename, before sysctl -p",
    sabotage: sh('node-0', 'rm -f /etc/sysctl.d/90-hardway-kubernetes.conf /etc/modules-load.d/hardway-kubernetes.conf'),
    trigger: up('node-0', 'worker-os', /^uploaded \/etc\/sysctl\.d\/90-hardway-kubernetes\.conf /),
  },
  {
    title: "containerd: node-1's containerd binary removed; killed in the middle of its upload",
    sabotage: sh('node-1', 'rm -f /usr/local/bin/containerd'),
    trigger: up('node-1', 'containerd', /^upload \/usr\/local\/bin\/containerd /),
  },
  {
    title: "containerd: node-0's containerd runs an altered config.toml; killed between its rename and the restart",
    sabotage: alterAndRestart('node-0', '/etc/containerd/config.toml', 'containerd'),
    trigger: up('node-0', 'containerd', /^uploaded \/etc\/containerd\/config\.toml /),
  },
  {
    title: "images: node-1's web archive and image removed; killed as the ctr import is sent",
    sabotage: sh('node-1', 'rm -f /var/lib/hardway/images/web.tar && ctr -n k8s.io images rm localhost/hardway/web:1'),
    trigger: up('node-1', 'images', /^\$ .*ctr -n k8s\.io images import /),
  },
  {
    title: "cni: every CNI plugin removed from node-0; killed after the 3rd of ~20 parallel plugin uploads",
    sabotage: sh('node-0', 'rm -f /opt/cni/bin/*'),
    trigger: up('node-0', 'cni', /^uploaded \/opt\/cni\/bin\//, 3),
  },
  {
    title: "kubelet: node-0's kubelet runs an altered unit; killed between the unit's rename and daemon-reload/restart",
    sabotage: alterAndRestart('node-0', '/etc/systemd/system/kubelet.service', 'kubelet', true),
    trigger: up('node-0', 'kubelet', /^uploaded \/etc\/systemd\/system\/kubelet\.service /),
  },
  {
    title: "kubelet: node-1's kubelet binary removed; killed in the middle of its upload",
    sabotage: sh('node-1', 'rm -f /usr/local/bin/kubelet'),
    trigger: up('node-1', 'kubelet', /^upload \/usr\/local\/bin\/kubelet /),
  },
  {
    title: "kube-proxy: node-1's kube-proxy stopped, disabled and its unit removed; killed after the unit's rename, before enable/start",
    sabotage: sh('node-1', 'systemctl disable --now kube-proxy && rm -f /etc/systemd/system/kube-proxy.service && systemctl daemon-reload'),
    trigger: up('node-1', 'kube-proxy', /^uploaded \/etc\/systemd\/system\/kube-proxy\.service /),
  },
  {
    title: "routes: node-0's routes unit stopped (its routes gone), disabled and removed; killed after the unit's rename, before enable/start",
    sabotage: sh('node-0', 'systemctl disable --now hardway-pod-routes && rm -f /etc/systemd/system/hardway-pod-routes.service && systemctl daemon-reload'),
    trigger: up('node-0', 'routes', /^uploaded \/etc\/systemd\/system\/hardway-pod-routes\.service /),
  },
];

/** What a check found wrong; `check` names the column of the table it fails. */
interface Problem {
  check: 'kill' | 'half-written' | 'rerun' | 'next' | 'files' | 'services' | 'stale' | 'certs';
  text: string;
}

/** A table row: where the kill landed and what the reruns did. */
interface Row {
  n: number;
  command: string;
  step: string;
  line: string;
  then: string;
  temps: number;
  /** Services whose main process the killed run (re)started before it died. */
  restarted: string[];
  rerunExit: number | null;
  rerunChanged: number | string;
  nextChanged: number | string;
  seconds: { kill: number; rerun: number; next: number; total: number };
  problems: Problem[];
}

const cut = (s: string, n: number) => (s.length > n ? s.slice(0, n - 1) + '…' : s);
const secs = (ms: number) => Math.round(ms / 1000);

describe('SIGKILL at 20 points of hardway up on the shared 1-server 2-worker lab (real Kubernetes v1.20.2): every interruption converges', () => {
  let desired: Desired;
  let machines: Machines;
  let renderDir = '';
  const rows: Row[] = [];

  /** Every machine's files (installed and pinned), services and temp files. */
  async function readAll(l: Lab): Promise<Map<string, MachineState>> {
    const states = await Promise.all(l.machines.map((m) => machines.read(m.hostname, [...desired.files(m.hostname).keys()],
      [...desired.blocks.get(m.hostname)!.keys()], desired.services(m.hostname))));
    return new Map(l.machines.map((m, i) => [m.hostname, states[i]!]));
  }

  /** The temp files of pki/ (writeAtomic's `.<hex>.tmp` beside each target), relative to pki/. */
  function pkiTemps(dir: string): string[] {
    const pki = join(dir, 'pki');
    return (readdirSync(pki, { recursive: true }) as string[]).filter((f) => /(^|\/)\.[^/]*\.tmp$/.test(f));
  }

  /** Every file of pki/ is whole: a certificate, a private key, a kubeconfig with both, or YAML (temp files aside). */
  function pkiProblems(dir: string): Problem[] {
    const problems: Problem[] = [];
    const pki = join(dir, 'pki');
    const temps = new Set(pkiTemps(dir));
    for (const f of (readdirSync(pki, { recursive: true }) as string[]).filter((x) => !temps.has(x) && statSync(join(pki, x)).isFile())) {
      const text = readFileSync(join(pki, f), 'utf8');
      try {
        if (f.endsWith('.crt')) new X509Certificate(text);
        else if (f.endsWith('.key')) createPrivateKey(text);
        else if (f.endsWith('.kubeconfig')) {
          const user = (parseYaml(text) as { users: { user: Record<string, string> }[] }).users[0]!.user;
          new X509Certificate(Buffer.from(user['client-certificate-data']!, 'base64'));
          createPrivateKey(Buffer.from(user['client-key-data']!, 'base64').toString('utf8'));
        } else if (f.endsWith('.yaml')) parseYaml(text);
      } catch (e) {
        problems.push({ check: 'half-written', text: `pki/${f} is not whole: ${(e as Error).message}` });
      }
    }
    return problems;
  }

  /** Right after a kill: each installed file is the old one or the new one; each pinned file the old one or one with the whole block. */
  function halfWritten(l: Lab, before: Map<string, MachineState>, dead: Map<string, MachineState>): Problem[] {
    const problems: Problem[] = [];
    for (const m of l.machines) {
      const h = m.hostname;
      for (const [path, want] of desired.files(h)) {
        const got = dead.get(h)!.files.get(path)!.sha256;
        const old = before.get(h)!.files.get(path)!.sha256;
        if (got !== old && got !== want) problems.push({ check: 'half-written', text: `after the kill ${h}:${path} is neither the old file (${old.slice(0, 12)}) nor the new one (${want.slice(0, 12)}): ${got.slice(0, 12)}` });
      }
      for (const [target, block] of desired.blocks.get(h)!) {
        const got = dead.get(h)!.text.get(target)!;
        if (got !== before.get(h)!.text.get(target) && !got.includes(block)) problems.push({ check: 'half-written', text: `after the kill ${h}:${target} is neither the old file nor one with the whole pinned block` });
      }
    }
    return problems;
  }

  /** What must hold after the reruns: installed bytes, pinned blocks, no temp files, services active, loaded, and started after their inputs. */
  function convergedProblems(l: Lab, now: Map<string, MachineState>, before?: Map<string, MachineState>): Problem[] {
    const problems: Problem[] = [];
    for (const m of l.machines) {
      const h = m.hostname;
      const st = now.get(h)!;
      for (const [path, want] of desired.files(h)) {
        const got = st.files.get(path)!.sha256;
        if (got !== want) problems.push({ check: 'files', text: `${h}:${path} ${got === 'missing' ? 'is missing' : `has SHA-256 ${got.slice(0, 12)}`}, want ${want.slice(0, 12)}` });
      }
      for (const [target, block] of desired.blocks.get(h)!) if (!st.text.get(target)!.includes(block)) problems.push({ check: 'files', text: `${h}:${target} lacks the pinned block` });
      for (const t of st.temps) problems.push({ check: 'files', text: `${h}: upload temp file left: ${t}` });
      for (const s of desired.services(h)) {
        const info = st.services.get(s)!;
        const was = before?.get(h)?.services.get(s)?.active;
        if (info.active !== 'active') problems.push({ check: 'services', text: `${h}: ${s} is ${info.active}${was === 'active' ? ' (it was running before the kill)' : ''}` });
        if (info.needReload) problems.push({ check: 'stale', text: `${h}: systemd still runs ${s} from an older ${s}.service (NeedDaemonReload=yes)` });
        for (const p of desired.inputs.get(h)!.get(s) ?? []) {
          const written = st.files.get(p)?.mtimeNs ?? 0n;
          // systemd keeps microseconds.
          if (info.startedNs > 0n && info.startedNs < written - (written % 1000n)) {
            problems.push({ check: 'stale', text: `${h}: ${s} runs since ${iso(info.startedNs)}, before ${p} was written (${iso(written)}): it still runs the file that was there before` });
          }
        }
      }
    }
    for (const t of pkiTemps(l.dir)) problems.push({ check: 'files', text: `temp file left in pki/ (an interrupted write, never removed): pki/${t}` });
    return problems;
  }

  /** After a failed point: restart what runs stale (and converge, if more was wrong), so the next point starts from a converged cluster. */
  async function heal(l: Lab, problems: Problem[]): Promise<void> {
    const now = await readAll(l);
    for (const m of l.machines) {
      const stale = convergedProblems(l, now).filter((p) => p.check === 'stale' && p.text.startsWith(`${m.hostname}: `)).map((p) => /^\S+: (?:systemd still runs )?(\S+)/.exec(p.text)![1]!);
      const services = [...new Set(stale)];
      if (services.length) await machines.run(m.hostname, `systemctl daemon-reload && systemctl restart ${services.join(' ')}`);
    }
    for (const t of pkiTemps(l.dir)) rmSync(join(l.dir, 'pki', t));
    if (problems.some((p) => p.check !== 'stale' && !p.text.startsWith('temp file left in pki/'))) await runJson(l, ['up']);
  }

  beforeAll(async () => {
    const l = lab();
    const first = await runJson(l, ['up']);
    if (first.exit.code !== 0) throw new Error(`the first hardway up failed (exit ${first.exit.code}):\n${first.exit.stderr}\n${first.exit.stdout}`);
    renderDir = mkdtempSync(join(tmpdir(), 'hardway-e2e-kill-render-'));
    const render = await l.hardway(['render', '--out', renderDir]);
    if (render.code !== 0) throw new Error(`hardway render failed:\n${render.stderr}`);
    // Every up log so far (the first one installed everything) names the local files it uploaded where.
    const logs = readdirSync(join(l.dir, 'logs')).filter((f) => f.includes('-up-')).sort();
    desired = new Desired(l.dir, renderDir, logs.map((f) => readFileSync(join(l.dir, 'logs', f), 'utf8')).join('\n'));
    machines = new Machines(l);
  });

  afterAll(async () => {
    await machines?.close();
    if (renderDir) rmSync(renderDir, { recursive: true, force: true });
    if (rows.length) console.log(table(rows));
  });

  it('the converged cluster passes every check the kill points use, and a second up changes nothing', async () => {
    const l = lab();
    expect(convergedProblems(l, await readAll(l))).toEqual([]);
    expect(pkiProblems(l.dir)).toEqual([]);
    expect(pkiTemps(l.dir)).toEqual([]);
    const again = await runJson(l, ['up']);
    expect(again.exit.code, again.exit.stderr).toBe(0);
    expect(again.json?.changed).toBe(0);
  });

  POINTS.forEach((p, i) => {
    it(`point ${i + 1}: ${p.title}`, async () => {
      const l = lab();
      const started = Date.now();
      const problems: Problem[] = [];
      try {
        await runPoint(l, p, i, started, problems);
      } catch (e) {
        problems.push({ check: 'kill', text: `the point stopped: ${(e as Error).stack ?? e}` });
        rows.push({ n: i + 1, command: p.command ?? 'up', step: '-', line: '(the point stopped, see below)', then: '', temps: 0, rerunExit: null,
          restarted: [], rerunChanged: '?', nextChanged: '?', seconds: { kill: 0, rerun: 0, next: 0, total: secs(Date.now() - started) }, problems });
      }
      if (problems.length) await heal(l, problems);
      expect(problems.map((x) => `${x.check}: ${x.text}`), `point ${i + 1} (${p.title})`).toEqual([]);
    });
  });

  /** One point: sabotage, killed run, checks right after the kill, rerun, next run, checks; pushes its row. */
  async function runPoint(l: Lab, p: Point, i: number, started: number, problems: Problem[]): Promise<void> {
    await p.sabotage(l, machines);
    const before = await readAll(l);
    const kill: Kill = await killAt(l, p.command === 'certs' ? ['certs'] : ['up', '--json'], p.trigger);
    if (p.pki) {
      const back = p.pki.filter((f) => existsSync(join(l.dir, f))).map((f) => f.replace(/^pki\/(machines\/)?/, ''));
      kill.hostLast = `back in pki/ at the kill: ${back.length ? back.join(' ') : 'none'} (of ${p.pki.length})`;
    }
    if (!kill.fired) problems.push({ check: 'kill', text: `the kill never fired: the run ${kill.exit.code === null ? 'was stopped after the timeout' : `ended with exit ${kill.exit.code}`} first; its log ends: ${kill.lastLines.join(' | ')}` });
    else if (kill.exit.signal !== 'SIGKILL') problems.push({ check: 'kill', text: `the run ended by itself (exit ${kill.exit.code}) before the kill reached it` });

    const dead = await readAll(l);
    problems.push(...halfWritten(l, before, dead), ...pkiProblems(l.dir));
    const temps = [...dead.values()].reduce((n, st) => n + st.temps.length, 0) + pkiTemps(l.dir).length;
    const restarted = l.machines.flatMap((m) => [...dead.get(m.hostname)!.services].filter(([s, info]) => info.startedNs !== before.get(m.hostname)!.services.get(s)!.startedNs).map(([s]) => `${s}@${m.hostname}`));

    const rerun = await runJson(l, ['up']);
    if (rerun.exit.code !== 0) {
      const failed = rerun.json?.results.filter((r) => r.status === 'failed').map((r) => `${r.step}@${r.machine}: ${r.error}`) ?? [rerun.exit.stderr.trim().split('\n').slice(-3).join(' ')];
      problems.push({ check: 'rerun', text: `the rerun failed (exit ${rerun.exit.code}): ${failed.join('; ')}` });
    }
    const next = await runJson(l, ['up']);
    if (next.exit.code !== 0 || next.json?.changed !== 0) {
      const changed = next.json?.results.filter((r) => r.status !== 'unchanged').map((r) => `${r.step}@${r.machine} ${r.status}`) ?? [];
      problems.push({ check: 'next', text: `the next up: exit ${next.exit.code}, changed ${next.json?.changed ?? '?'} (${changed.join(', ')})` });
    }
    problems.push(...convergedProblems(l, await readAll(l), before));
    const check = await l.hardway(['certs', 'check']);
    if (check.code !== 0) problems.push({ check: 'certs', text: `certs check exit ${check.code}: ${check.stdout.trim().split('\n').slice(-3).join(' | ')}` });

    rows.push({
      n: i + 1,
      command: p.command ?? 'up',
      step: kill.host === '-' ? '-' : `${kill.step}@${kill.host}`,
      line: kill.line,
      then: kill.hostLast,
      temps,
      restarted,
      rerunExit: rerun.exit.code,
      rerunChanged: rerun.json?.changed ?? '?',
      nextChanged: next.json?.changed ?? '?',
      seconds: { kill: secs(kill.exit.ms), rerun: secs(rerun.exit.ms), next: secs(next.exit.ms), total: secs(Date.now() - started) },
      problems,
    });
  }

  it('20 of 20 kill points converged', () => {
    expect(rows.length).toBe(POINTS.length);
    const passed = rows.filter((r) => r.problems.length === 0).length;
    expect(`${passed}/${POINTS.length}`, table(rows)).toBe(`${POINTS.length}/${POINTS.length}`);
  });
});

function iso(ns: bigint): string {
  return new Date(Number(ns / 1_000_000n)).toISOString();
}

/** The table of points and outcomes, then every problem in full. */
function table(rows: Row[]): string {
  const head = ['#', 'cmd', 'step@machine', 'killed at (run log line)', "that machine's last line before death", 'tmp', 'restarted', 'rerun', 'next', 'seconds', 'result'];
  const body = rows.map((r) => [String(r.n), r.command, r.step, cut(r.line, 72), cut(r.then === r.line ? '(same)' : r.then, 70), String(r.temps), r.restarted.join(' ') || '-',
    `${r.rerunExit}/${r.rerunChanged}`, String(r.nextChanged), `${r.seconds.kill}+${r.seconds.rerun}+${r.seconds.next}=${r.seconds.total}`,
    r.problems.length ? `FAIL (${[...new Set(r.problems.map((x) => x.check))].join(', ')})` : 'pass']);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd();
  const passed = rows.filter((r) => r.problems.length === 0).length;
  return [
    `kill points: ${passed}/${rows.length} converged`,
    'rerun = exit/changed of the up after the kill; next = changed of the up after that; tmp = temp files right after the kill (uploads on the machines, writes in pki/);',
    'restarted = services the killed run (re)started before it died;',
    'seconds = killed run + rerun + next run = the whole point with its checks; a FAIL names the checks that failed:',
    '  kill (never fired) | half-written (right after the kill) | rerun (failed) | next (changed != 0) | files (SHA-256, pinned block, temp files)',
    '  | services (not active) | stale (runs since before an input was written, or needs daemon-reload) | certs (certs check)',
    line(head),
    ...body.map(line),
    ...rows.filter((r) => r.problems.length).flatMap((r) => [`point ${r.n}:`, ...r.problems.map((p) => `  - ${p.check}: ${p.text}`)]),
  ].join('\n');
}
