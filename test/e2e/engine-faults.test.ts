// The engine under faults, on real lab machines: SIGKILL in the middle of a large upload (no
// reader ever sees half a file; a rerun converges and takes over the dead run's lock), a stopped
// machine, a changed host key, and the network cut for a few seconds under a run.
import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, openSync, closeSync, readdirSync, readFileSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO, useLab, type Lab } from './helpers/lab.ts';
import { startCollected, type Exit, type Started } from './helpers/spawn.ts';

const lab = useLab({ name: 'e2e-eng', subnet: '10.240.30.0/24', workers: 2 });
const BIG = '/var/tmp/hardway-big.bin';
const TEMPLATE = '/etc/cloud/templates/hosts.debian.tmpl';
let files: string;

beforeAll(() => {
  files = mkdtempSync(join(tmpdir(), 'hw-faults-'));
});
afterAll(() => rmSync(files, { recursive: true, force: true }));

/** A local file of `mb` MiB of random bytes; returns its path and SHA-256. */
function randomFile(name: string, mb: number): { path: string; sha: string } {
  const path = join(files, name);
  const fd = openSync(path, 'w');
  const h = createHash('sha256');
  for (let i = 0; i < mb; i++) {
    const chunk = randomBytes(1 << 20);
    h.update(chunk);
    writeSync(fd, chunk);
  }
  closeSync(fd);
  return { path, sha: h.digest('hex') };
}

/** Starts the engine driver (one large put through the real session and SSH transport). */
function startDriver(l: Lab, machine: string, local: string): Started {
  return startCollected(process.execPath, ['--import', 'tsx', join(REPO, 'test/fixtures/engine-driver.ts'), l.dir, machine, BIG, local], { cwd: REPO });
}

/** Waits for a condition, polling; fails after `ms`. */
async function until(what: string, ms: number, check: () => Promise<boolean> | boolean): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Kills a child that did not finish in time, so a hang fails the test instead of blocking it. */
async function within(ms: number, p: Started): Promise<Exit> {
  const timer = setTimeout(() => p.child.kill('SIGKILL'), ms);
  const exit = await p.done;
  clearTimeout(timer);
  expect(exit.signal, `hung for ${ms} ms and was killed:\n${exit.stderr}`).toBeNull();
  return exit;
}

/** The host-side veth of a lab machine (its peer's ifindex is host0's iflink). */
async function hostVeth(l: Lab, machine: string): Promise<string> {
  const index = (await l.run(machine, 'cat /sys/class/net/host0/iflink')).trim();
  const line = execFileSync('ip', ['-o', 'link', 'show'], { encoding: 'utf8' }).split('\n').find((x) => x.startsWith(`${index}: `));
  return line!.split(': ')[1]!.split('@')[0]!;
}

async function sha(l: Lab, machine: string, path: string): Promise<string> {
  return (await l.run(machine, `sha256sum < ${path} | cut -c1-64`)).trim();
}

describe('engine faults on the lab', () => {
  it('SIGKILL while uploading a large file: readers only ever see the old or the new file; a rerun converges', async () => {
    const l = lab();
    const old = randomFile('old.bin', 64);
    const neu = randomFile('new.bin', 256);
    const first = await within(120_000, startDriver(l, 'node-0', old.path));
    expect(first.code, first.stderr).toBe(0);
    expect(await sha(l, 'node-0', BIG)).toBe(old.sha);

    // A reader on the machine hashes the target over and over, for the whole test.
    await l.run('node-0', `rm -f /tmp/seen /tmp/stop-watch; systemd-run --unit=hw-watch sh -c 'while [ ! -e /tmp/stop-watch ]; do sha256sum < ${BIG} 2>&1 | cut -c1-64 >> /tmp/seen; done; touch /tmp/watch-done'`);
    await until('the watcher to read', 30_000, async () => (await l.run('node-0', 'wc -l < /tmp/seen 2>/dev/null || echo 0')).trim() !== '0');

    const killed = startDriver(l, 'node-0', neu.path);
    const logs = join(l.dir, 'logs');
    await until('the upload to start', 60_000, () =>
      existsSync(logs) && readdirSync(logs).some((f) => f.includes('test-large-put') && readFileSync(join(logs, f), 'utf8').includes(`upload ${BIG}`) && !readFileSync(join(logs, f), 'utf8').includes('uploaded')),
    );
    await until('the temp file beside the target', 30_000, async () => (await l.run('node-0', `ls -a /var/tmp`)).includes('.hardway-big.bin.hardway-tmp-'));
    killed.child.kill('SIGKILL');
    const dead = await killed.done;
    expect(dead.signal).toBe('SIGKILL');
    // Killed mid-upload: the target is still the old file, and the dead run's lock is left behind.
    expect(await sha(l, 'node-0', BIG)).toBe(old.sha);
    expect(existsSync(join(l.dir, '.hardway.lock'))).toBe(true);

    const rerun = await within(180_000, startDriver(l, 'node-0', neu.path));
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(JSON.parse(rerun.stdout)).toMatchObject({ ok: true, changed: 1 });
    expect(await sha(l, 'node-0', BIG)).toBe(neu.sha);
    const again = await within(120_000, startDriver(l, 'node-0', neu.path));
    expect(JSON.parse(again.stdout)).toMatchObject({ ok: true, changed: 0 });
    expect(await l.run('node-0', 'ls -a /var/tmp')).not.toContain('hardway-tmp');

    await l.run('node-0', 'touch /tmp/stop-watch');
    await until('the watcher to stop', 30_000, async () => (await l.ssh('node-0', 'test -e /tmp/watch-done')).code === 0);
    const seen = (await l.run('node-0', 'cat /tmp/seen')).trim().split('\n');
    const kinds = new Set(seen);
    expect([...kinds].filter((s) => s !== old.sha && s !== neu.sha), 'a reader saw something other than the old or the new file').toEqual([]);
    expect(kinds.has(old.sha)).toBe(true);
    expect(kinds.has(neu.sha)).toBe(true);
    await l.run('node-0', `rm -f ${BIG} /tmp/seen`);
  });

  it('one machine stopped: the others finish, the failure names it, exit 1; --node finishes it once it is back', async () => {
    const l = lab();
    expect((await l.hardway(['pin-hosts'])).code).toBe(0);
    // Unfinished work on every machine; node-1's survives its reboot because it is in the template.
    await l.run('server', "sed -i '/^10.240.30.2/d' /etc/hosts");
    await l.run('node-0', "sed -i '/^10.240.30.10/d' /etc/hosts");
    await l.run('node-1', `sed -i '/^10.240.30.10/d' ${TEMPLATE}`);
    expect((await l.hardway(['lab', 'stop', '--name', l.name, 'node-1'])).code).toBe(0);
    const started = Date.now();
    const r = await l.hardway(['pin-hosts', '--json']);
    expect(Date.now() - started).toBeLessThan(120_000);
    expect(r.code).toBe(1);
    const json = JSON.parse(r.stdout);
    expect(json).toMatchObject({ ok: false, failed: 1 });
    expect(json.results.map((x: { machine: string; status: string }) => `${x.machine}:${x.status}`)).toEqual(['server:changed', 'node-0:changed', 'node-1:failed']);
    expect(json.results[2].error).toMatch(/node-1/);
    expect(json.results[2].unreachable).toBe(true);
    expect(r.stderr).toMatch(/^node-1: pin-hosts: unreachable$/m);
    // The summary (on stderr with --json): node-1 unreachable, with its error once.
    expect(r.stderr).toMatch(/^ {2}node-1 {2}unreachable {2}pin-hosts: cannot connect to /m);
    expect(r.stderr).toMatch(/^log of this run: /m);

    expect((await l.hardway(['lab', 'start', '--name', l.name, 'node-1'])).code).toBe(0);
    const back = await l.hardway(['pin-hosts', '--node', 'node-1', '--json']);
    expect(back.code, back.stderr).toBe(0);
    // /etc/hosts, the template, and cloud-init's regeneration of /etc/hosts (a change of its own since issue 14).
    expect(JSON.parse(back.stdout).results).toEqual([{ step: 'pin-hosts', machine: 'node-1', status: 'changed', changes: 3 }]);
    expect(JSON.parse((await l.hardway(['pin-hosts', '--json'])).stdout)).toMatchObject({ ok: true, changed: 0 });
  });

  it('a changed host key is refused, naming the machine and both fingerprints, and nothing is changed there', async () => {
    const l = lab();
    await l.run('node-0', "sed -i '/^10.240.30.10/d' /etc/hosts");
    const before = await sha(l, 'node-0', '/etc/hosts');
    const saved = readFileSync(l.knownHosts, 'utf8');
    const keyFile = join(files, 'other_key');
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', keyFile]);
    const otherKey = readFileSync(`${keyFile}.pub`, 'utf8').split(' ').slice(0, 2).join(' ');
    writeFileSync(l.knownHosts, saved.split('\n').map((line) => (line.split(' ')[0]!.split(',').includes('node-0') ? `${line.split(' ')[0]} ${otherKey}` : line)).join('\n'));
    try {
      const r = await l.hardway(['pin-hosts', '--json', '--accept-new-host-keys']);
      expect(r.code).toBe(1);
      const json = JSON.parse(r.stdout);
      expect(json.results.map((x: { machine: string; status: string }) => `${x.machine}:${x.status}`)).toEqual(['server:unchanged', 'node-0:failed', 'node-1:unchanged']);
      expect(json.results[1].error).toMatch(/node-0: HOST KEY OF .* HAS CHANGED: pinned SHA256:\S+ .* presented SHA256:\S+/);
    } finally {
      writeFileSync(l.knownHosts, saved);
    }
    expect(await sha(l, 'node-0', '/etc/hosts')).toBe(before);
    // /etc/hosts and cloud-init's regeneration of it.
    expect(JSON.parse((await l.hardway(['pin-hosts', '--json'])).stdout)).toMatchObject({ ok: true, changed: 2 });
  });

  it('the network cut for 5 s before and during a run: retried or a clear error, never a hang; a rerun converges', async () => {
    const l = lab();
    const veth = await hostVeth(l, 'node-0');
    await l.run('node-0', "sed -i '/^10.240.30.10/d' /etc/hosts");
    // Cut before the run starts: connecting must retry until the link is back (or fail clearly).
    execFileSync('ip', ['link', 'set', veth, 'down']);
    const restore = setTimeout(() => execFileSync('ip', ['link', 'set', veth, 'up']), 5_000);
    try {
      const started = Date.now();
      const r = await l.hardway(['pin-hosts', '--json']);
      expect(Date.now() - started).toBeLessThan(120_000);
      const node0 = JSON.parse(r.stdout).results.find((x: { machine: string }) => x.machine === 'node-0');
      if (r.code === 0) expect(node0.status).toBe('changed');
      else expect(node0.error).toMatch(/node-0/);
    } finally {
      clearTimeout(restore);
      execFileSync('ip', ['link', 'set', veth, 'up']);
    }

    // Cut in the middle of a large upload.
    const big = randomFile('cut.bin', 256);
    const run = startDriver(l, 'node-0', big.path);
    await until('the temp file beside the target', 60_000, async () => (await l.run('node-0', 'ls -a /var/tmp')).includes('.hardway-big.bin.hardway-tmp-'));
    const cutAt = Date.now();
    execFileSync('ip', ['link', 'set', veth, 'down']);
    await new Promise((r) => setTimeout(r, 5_000));
    execFileSync('ip', ['link', 'set', veth, 'up']);
    const cut = await within(180_000, run);
    if (cut.code !== 0) {
      expect(cut.stdout + cut.stderr).toMatch(/node-0/);
    } else {
      expect(await sha(l, 'node-0', BIG)).toBe(big.sha);
      // The upload really spanned the cut: it finished after the link went down.
      const log = readdirSync(join(l.dir, 'logs')).filter((f) => f.includes('test-large-put')).sort().at(-1)!;
      const done = readFileSync(join(l.dir, 'logs', log), 'utf8').split('\n').find((x) => x.includes(`uploaded ${BIG}`))!;
      expect(Date.parse(done.split(' ')[0]!)).toBeGreaterThan(cutAt);
    }

    const rerun = await within(180_000, startDriver(l, 'node-0', big.path));
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(await sha(l, 'node-0', BIG)).toBe(big.sha);
    expect(JSON.parse((await l.hardway(['pin-hosts', '--json'])).stdout)).toMatchObject({ ok: true, changed: 0 });
    await l.run('node-0', `rm -f ${BIG}`);
  });
});
