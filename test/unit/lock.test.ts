// The project's lock around everything that writes pki/ or touches machines, tried with real
// processes: a run holding it makes every other one stop at once naming it; a dead holder's lock is
// taken over, by exactly one of several runs that find it at the same moment; `hardway certs`
// started several times at once leaves one valid pki/.
import { unwrapErrors } from '../helpers/unwrap.ts';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { acquireRunLock, LOCK_FILE, type LockInfo } from '../../src/lock.ts';
import { hardway, makeProject } from './certs.helpers.ts';
import { fakeCluster, inventoryOf, runCommand } from './engine.helpers.ts';
import { DEBIAN_OS_RELEASE } from '../fixtures/fake-transport.ts';

const REPO = resolve(import.meta.dirname, '../..');
const HOLDER = join(REPO, 'test/fixtures/lock-holder.ts');
const BIN = join(REPO, 'bin/hardway.mjs');

interface Exit { code: number | null; stdout: string; stderr: string; pid: number }

/** Starts a node process (TypeScript through tsx) and collects what it prints. */
function start(args: string[], cwd = REPO): { pid: number; done: Promise<Exit>; stdoutSoFar: () => string; kill: (s: NodeJS.Signals) => void } {
  const child = spawn(process.execPath, args, { cwd, env: { ...process.env, HARDWAY_NO_BUNDLE: '1', CI: 'true' }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const done = new Promise<Exit>((r) => child.on('close', (code) => r({ code, stdout, stderr: unwrapErrors(stderr), pid: child.pid! })));
  return { pid: child.pid!, done, stdoutSoFar: () => stdout, kill: (s) => child.kill(s) };
}

async function until(what: string, ok: () => boolean, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const deadPid = () => spawnSync(process.execPath, ['-e', '0']).pid!;

describe('commands that write pki/ take the project lock', () => {
  it.each(['certs', 'kubeconfigs', 'encryption-config'])('%s is refused at once while another run holds it, naming pid and command, writing nothing', async (cmd) => {
    const p = makeProject({ cluster: 'keyAlgorithm: ecdsa-p256\n' });
    const held = acquireRunLock(p.dir, 'up', { pid: process.pid, alive: () => true });
    try {
      const t = Date.now();
      const run = await hardway(p, cmd);
      expect(Date.now() - t).toBeLessThan(2000);
      expect(run.code).toBe(1);
      expect(run.stderr).toContain(`error: another hardway run is using this project: pid ${process.pid} on ${hostname()} ("hardway up"`);
      expect(existsSync(join(p.dir, 'pki'))).toBe(false);
    } finally {
      held.release();
    }
    // Free again: the command runs and leaves no lock behind.
    if (cmd !== 'kubeconfigs') expect((await hardway(p, cmd)).code).toBe(0);
    expect(readdirSync(p.dir)).not.toContain(LOCK_FILE);
  });

  it('`up` holds the lock before it builds pki/: a held lock stops it before pki/ exists', async () => {
    const p = makeProject({ cluster: 'keyAlgorithm: ecdsa-p256\n' });
    const held = acquireRunLock(p.dir, 'certs', { pid: process.pid, alive: () => true });
    try {
      const fakes = fakeCluster(inventoryOf(), (h) => ({ files: { '/etc/hosts': '127.0.0.1 localhost\n', '/etc/hostname': `${h}\n`, '/etc/os-release': DEBIAN_OS_RELEASE } }));
      const run = await runCommand('up', [], p.dir, fakes);
      expect(run.code).toBe(1);
      expect(run.stderr).toContain(`pid ${process.pid} on ${hostname()} ("hardway certs"`);
      expect(existsSync(join(p.dir, 'pki'))).toBe(false);
      for (const f of fakes.values()) expect(f.commands).toEqual([]);
    } finally {
      held.release();
    }
  });
});

describe('taking over a dead run\'s lock', () => {
  it('two runs that both judged the same lock dead: the slower one never removes the new lock of the faster', () => {
    const p = makeProject();
    const dead = deadPid();
    writeFileSync(join(p.dir, LOCK_FILE), JSON.stringify({ pid: dead, host: hostname(), command: 'certs', started: 'earlier' }) + '\n');
    const running = new Set([1001, 1002]);
    const alive = (h: LockInfo) => running.has(h.pid);
    let faster: ReturnType<typeof acquireRunLock> | undefined;
    // Run A judges the dead lock; right then, run B (which judged it too) takes it over completely.
    const slower = () => acquireRunLock(p.dir, 'a', {
      pid: 1001,
      alive: (h) => {
        if (h.pid === dead && !faster) faster = acquireRunLock(p.dir, 'b', { pid: 1002, alive });
        return alive(h);
      },
    });
    expect(slower).toThrow(/^another hardway run is using this project: pid 1002 on .* \("hardway b"/);
    expect(JSON.parse(readFileSync(join(p.dir, LOCK_FILE), 'utf8')).pid).toBe(1002);
    faster!.release();
    expect(readdirSync(p.dir).filter((f) => f.startsWith(LOCK_FILE))).toEqual([]);
  });

  it('a lock left by a run of an earlier boot (its pid now someone else\'s) is taken over', () => {
    const p = makeProject();
    // This very process's pid, but the boot id of another boot: not the run that wrote it.
    writeFileSync(join(p.dir, LOCK_FILE), JSON.stringify({ pid: process.pid, host: hostname(), command: 'up', started: 'earlier', boot: 'another-boot' }) + '\n');
    const lock = acquireRunLock(p.dir, 'certs');
    expect(JSON.parse(readFileSync(join(p.dir, LOCK_FILE), 'utf8'))).toMatchObject({ pid: process.pid, command: 'certs' });
    lock.release();
  });
});

describe('the lock between processes', () => {
  it('a running holder refuses `hardway certs` at once; once it is killed (SIGKILL) its lock is taken over', async () => {
    const p = makeProject({ cluster: 'keyAlgorithm: ecdsa-p256\n' });
    const holder = start(['--import', 'tsx', HOLDER, p.dir, 'up', '-1']);
    try {
      await until('the holder to take the lock', () => holder.stdoutSoFar().includes('held'));
      const refused = await start([BIN, 'certs', '--machines', p.machines], p.dir).done;
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain(`error: another hardway run is using this project: pid ${holder.pid} on ${hostname()} ("hardway up"`);
      expect(refused.stderr).not.toMatch(/\n\s+at /);
      expect(existsSync(join(p.dir, 'pki'))).toBe(false);
    } finally {
      holder.kill('SIGKILL');
      await holder.done;
    }
    expect(existsSync(join(p.dir, LOCK_FILE))).toBe(true); // left behind by the killed run
    const after = await start([BIN, 'certs', '--machines', p.machines], p.dir).done;
    expect(after.code, after.stderr).toBe(0);
    expect(after.stdout).toContain('issued ca (new)');
    expect(existsSync(join(p.dir, LOCK_FILE))).toBe(false);
  }, 60_000);

  it('six processes that find the same dead lock at the same moment: one takes it, the others are refused naming it, never two at once', async () => {
    const p = makeProject();
    writeFileSync(join(p.dir, LOCK_FILE), JSON.stringify({ pid: deadPid(), host: hostname(), command: 'certs', started: 'earlier' }) + '\n');
    const startAt = String(Date.now() + 4000);
    const runs = Array.from({ length: 6 }, () => start(['--import', 'tsx', HOLDER, p.dir, 'race', '1500', startAt]));
    const results = (await Promise.all(runs.map((r) => r.done))).map((r) => JSON.parse(r.stdout) as { pid: number; took?: number; released?: number; refused?: string });
    const winners = results.filter((r) => r.took !== undefined);
    expect(winners.length).toBeGreaterThanOrEqual(1);
    const spans = winners.map((w) => [w.took!, w.released!] as const).sort((a, b) => a[0] - b[0]);
    for (let i = 1; i < spans.length; i++) expect(spans[i]![0], 'two runs held the lock at once').toBeGreaterThanOrEqual(spans[i - 1]![1]);
    for (const r of results.filter((x) => x.refused !== undefined)) {
      expect(r.refused).toMatch(new RegExp(`^another hardway run is using this project: pid (${winners.map((w) => w.pid).join('|')}) on .* \\("hardway race"`));
    }
    expect(readdirSync(p.dir).filter((f) => f.startsWith(LOCK_FILE))).toEqual([]);
  }, 60_000);

  it('three `hardway certs` started together in a fresh directory: one makes the CA, the others are refused or keep it; pki/ checks out', async () => {
    const p = makeProject({ cluster: 'keyAlgorithm: rsa-2048\n' });
    const runs = await Promise.all([1, 2, 3].map(() => start([BIN, 'certs', '--machines', p.machines], p.dir).done));
    const pids = runs.map((r) => r.pid);
    for (const r of runs) {
      if (r.code === 0) continue;
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(new RegExp(`another hardway run is using this project: pid (${pids.join('|')}) on .* \\("hardway certs"`));
    }
    expect(runs.filter((r) => r.stdout.includes('issued ca (new)'))).toHaveLength(1);
    const check = await hardway(p, 'certs', 'check');
    expect(check.code, check.stdout).toBe(0);
  }, 120_000);
});
