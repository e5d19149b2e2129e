// Machines as cloud images come: the shared lab (test/e2e/helpers/shared-lab.ts) is made with
// `--login-user debian` (cloud-init makes debian with the lab key and passwordless sudo; sshd
// refuses root), so every suite that takes its turn there (day-two: up, reset --yes, up again;
// cluster: up, a second up that changes nothing, smoke; doctor: every break scenario found and
// fixed; etcd-snapshot: save and restore; the kill test) runs through one `sudo -n sh -c` per
// command. This suite checks what is particular to such a login, on the converged cluster: root is
// refused and inventory says how commands are raised; a dry run and the run log show the commands
// through sudo; root's files are root's and no upload temp file is left; a second `up` changes
// nothing; doctor is clean; `etcd snapshot save` (smoke with names in pods is cluster's, each break
// scenario found and fixed through sudo doctor's, on this same lab);
// a sudoers entry that wants a password stops that machine at once with the line to add.
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { machinePaths } from '../../src/lab/machine.ts';
import { defaultLabPaths, machineDir } from '../../src/lab/names.ts';
import type { Finding } from '../../src/doctor/types.ts';
import type { Lab } from './helpers/lab.ts';
import { eventually, failures, jumpboxKubectl, runJson, type RunSummary } from './helpers/cluster.ts';
import { SHARED_LAB, useSharedCluster } from './helpers/shared-lab.ts';

const NAME = SHARED_LAB.name;
const USER = SHARED_LAB.loginUser;
if (!USER) throw new Error('the shared lab runs as root here (HARDWAY_E2E_SHARED_LOGIN is empty): this suite needs a login user');

const lab = useSharedCluster();
const UP = ['up', '--keep-going', '--ready-timeout', '180'];
const READY = ['node-0 True', 'node-1 True'];
/** Where uploads land: no staging directory (or temp file) may be left in them. */
const INSTALL_DIRS = '/etc /usr/local/bin /var/lib/kubernetes /var/lib/kubelet /var/lib/kube-proxy /opt/cni';

/** Expects a run in which nothing failed or was skipped. */
function expectNoFailures(s: RunSummary): void {
  expect(failures(s), JSON.stringify(failures(s), null, 1)).toEqual({});
  expect(s.results.filter((r) => r.status === 'skipped')).toEqual([]);
}

async function nodes(l: Lab): Promise<string[]> {
  const out = await jumpboxKubectl(l, ['get', 'nodes', '-o', 'jsonpath={range .items[*]}{.metadata.name} {.status.conditions[?(@.type=="Ready")].status}{"\\n"}{end}']);
  return out.trim().split('\n').sort();
}

async function doctor(l: Lab): Promise<{ code: number; ok: boolean; findings: Finding[] }> {
  const r = await l.hardway(['doctor', '--json']);
  try {
    return { code: r.code, ...(JSON.parse(r.stdout) as { ok: boolean; findings: Finding[] }) };
  } catch {
    throw new Error(`hardway doctor --json printed no JSON (exit ${r.code}):\n${r.stdout}\n${r.stderr}`);
  }
}

/** The run log written last (logs/ of the project). */
function lastLog(l: Lab): string {
  const logs = readdirSync(join(l.dir, 'logs')).sort();
  return readFileSync(join(l.dir, 'logs', logs.at(-1)!), 'utf8');
}

describe(`hardway on machines that let in ${USER} with passwordless sudo, not root`, () => {
  // The cluster as the suite before left it, converged (a no-op when it is).
  beforeAll(async () => {
    const up = await runJson(lab(), UP);
    expect(failures(up.json), up.stderr).toEqual({});
  });

  it(`the lab lets ${USER} in with sudo and refuses root; inventory shows the login and how commands are raised`, async () => {
    const l = lab();
    expect(readFileSync(join(l.dir, 'cluster.yaml'), 'utf8')).toMatch(new RegExp(`^ {2}user: ${USER}$`, 'm'));
    expect((await l.run('node-0', 'id -u')).trim()).toBe('0');
    const root = await l.hardway(['lab', 'ssh', 'node-0', '--name', NAME, '--', 'true']);
    expect(root.code).toBe(0);
    // Root's own login is refused by sshd, with the lab's key.
    const { execFileSync } = await import('node:child_process');
    expect(() => execFileSync('ssh', ['-F', l.sshConfig, '-o', 'BatchMode=yes', '-o', 'User=root', 'node-0', 'true'], { stdio: 'pipe' })).toThrow(/Permission denied/);
    const inv = await l.hardway(['inventory']);
    expect(inv.stdout).toMatch(new RegExp(`^login {11}${USER} over SSH, every command raised with sudo -n`, 'm'));
  });

  it('a dry run shows each command as it would run, through sudo -n; the run log of up shows them so; root\'s files are root\'s; no upload temp file is left', async () => {
    const l = lab();
    // Something for up to do: kube-proxy stopped on node-0 (up starts it again below).
    await l.run('node-0', 'systemctl stop kube-proxy');
    const dry = await l.hardway(['up', '--dry-run', '--api-timeout', '1', '--ready-timeout', '0']);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toMatch(/^node-0: {3}run: sudo -n sh -c '.*systemctl start kube-proxy/m);
    const reset = await l.hardway(['reset', '--dry-run']);
    expect(reset.code, reset.stderr).toBe(0);
    expect(reset.stdout).toMatch(/^server: {3}run: sudo -n sh -c '/m);
    const up = await runJson(l, UP);
    expect(up.code, up.stderr).toBe(0);
    expectNoFailures(up.json);
    expect(lastLog(l)).toMatch(/\$ sudo -n sh -c '.*systemctl start kube-proxy/);
    expect((await l.run('node-0', 'systemctl is-active kube-proxy')).trim()).toBe('active');
    expect((await l.run('server', 'stat -c "%a %U:%G" /var/lib/kubernetes/ca.key /usr/local/bin/etcd')).trim().split('\n')).toEqual(['600 root:root', '755 root:root']);
    for (const m of l.machines) {
      expect(await l.run(m.hostname, `find ${INSTALL_DIRS} -xdev -name '.*.hardway-tmp-*' 2>/dev/null || true`), m.hostname).toBe('');
    }
  });

  it('a second up changes nothing', async () => {
    const started = Date.now();
    const again = await runJson(lab(), UP);
    // The budget: at most 10% over the same no-op as root (cluster.test.ts's lab, bench:up).
    console.log(`no-op up through sudo on the 1+2 lab: ${((Date.now() - started) / 1000).toFixed(1)} s`);
    expect(again.code, again.stderr).toBe(0);
    expectNoFailures(again.json);
    expect(again.json.changed).toBe(0);
  });

  it('doctor is clean', async () => {
    const d = await eventually(async () => {
      const r = await doctor(lab());
      expect(r.findings).toEqual([]);
      return r;
    }, 60);
    expect(d).toMatchObject({ code: 0, ok: true });
  });

  it('etcd snapshot save works', async () => {
    const l = lab();
    const r = await l.hardway(['etcd', 'snapshot', 'save']);
    expect(r.code, r.stderr).toBe(0);
    const saved = /^Saved (backups\/etcd-snapshot-\S+\.db) \(mode 0600\) from server/m.exec(r.stdout);
    expect(saved, r.stdout).not.toBeNull();
    // backups/ as the etcd-snapshot suite expects it on the shared lab: without this one.
    rmSync(join(l.dir, saved![1]!));
  });

  it(`a sudoers entry that wants a password stops that machine at once (exit 1) naming machine, user and the line to add`, async () => {
    const l = lab();
    // Changed and put back from the host, through the machine's root (sudo cannot put back what needs a password).
    const file = join(machinePaths(machineDir(defaultLabPaths(process.env), NAME, 'node-0')).root, 'etc/sudoers.d/90-cloud-init-users');
    const kept = readFileSync(file, 'utf8');
    expect(kept).toContain(`${USER} ALL=(ALL) NOPASSWD:ALL`);
    writeFileSync(file, kept.replace('NOPASSWD:', ''));
    try {
      const started = Date.now();
      const r = await runJson(l, ['up', '--dry-run']);
      expect(r.code, r.stderr).toBe(1);
      // Only node-0, named with the user and the line to add; the others go on.
      const failed = failures(r.json);
      expect(Object.keys(failed)).toEqual(['pin-hosts@node-0']);
      const error = failed['pin-hosts@node-0']!;
      expect(error).toContain(`${USER} cannot run commands as root with sudo -n: sudo asks for a password (sudo said: sudo: a password is required); nothing was done on this machine`);
      expect(error).toContain(`hint: on node-0, as root: echo '${USER} ALL=(ALL) NOPASSWD:ALL' > /etc/sudoers.d/${USER} && chmod 0440 /etc/sudoers.d/${USER}`);
      expect(error).not.toContain('REDACTED');
      // Never a wait for a password.
      expect(Date.now() - started).toBeLessThan(60_000);
    } finally {
      writeFileSync(file, kept);
    }
    const ok = await runJson(l, UP);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.json.changed).toBe(0);
  });
});
