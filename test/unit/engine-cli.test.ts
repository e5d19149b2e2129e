// Remote commands end to end on fake machines: --json, --node, --only, exit codes, the run lock,
// and the run log file.
import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { hostname } from 'node:os';
import { spawnSync } from 'node:child_process';
import { acquireRunLock, LOCK_FILE } from '../../src/lock.ts';
import { STEPS } from '../../src/steps/index.ts';
import { FakeTransport } from '../fixtures/fake-transport.ts';
import { DEBIAN_OS_RELEASE } from '../fixtures/fake-transport.ts';
import { inventoryOf, fakeCluster, projectDir, runCommand } from './engine.helpers.ts';

const simple = (h: string) => ({ hostname: h, tools: [], files: { '/etc/hosts': '127.0.0.1 localhost\n', '/etc/hostname': `${h}\n`, '/etc/os-release': DEBIAN_OS_RELEASE } });

describe('remote command output', () => {
  it('--json prints exactly one JSON object with every step/machine result; a rerun reports 0 changes', async () => {
    const dir = projectDir();
    const fakes = fakeCluster(inventoryOf(), simple);
    const first = await runCommand('pin-hosts', ['--json'], dir, fakes);
    expect(first.code).toBe(0);
    expect(JSON.parse(first.stdout)).toEqual({
      ok: true,
      changed: 3,
      failed: 0,
      results: [
        { step: 'pin-hosts', machine: 'server', status: 'changed', changes: 1 },
        { step: 'pin-hosts', machine: 'node-0', status: 'changed', changes: 1 },
        { step: 'pin-hosts', machine: 'node-1', status: 'changed', changes: 1 },
      ],
    });
    expect(first.stdout.trim().split('\n')).toHaveLength(1);
    // Progress went to stderr so stdout stays parseable.
    expect(first.stderr).toContain('node-0: pin-hosts: changed (1 change)');
    const second = await runCommand('pin-hosts', ['--json'], dir, fakes);
    expect(JSON.parse(second.stdout)).toMatchObject({ ok: true, changed: 0, failed: 0 });
  });

  it('a failed machine: exit 1, error in JSON, log path printed, others done', async () => {
    const dir = projectDir();
    const fakes = fakeCluster(inventoryOf(), simple);
    fakes.get('node-1')!.uploadError = new Error('node-1: SFTP: Permission denied');
    const r = await runCommand('pin-hosts', ['--json'], dir, fakes);
    expect(r.code).toBe(1);
    const json = JSON.parse(r.stdout);
    expect(json).toMatchObject({ ok: false, changed: 2, failed: 1 });
    expect(json.results[2]).toEqual({ step: 'pin-hosts', machine: 'node-1', status: 'failed', changes: 0, error: 'node-1: SFTP: Permission denied' });
    expect(r.stderr).toMatch(/^log of this run: .*\/logs\/.*-pin-hosts-\d+\.log$/m);
  });

  it('prints one summary line per machine in text mode, then the log', async () => {
    const dir = projectDir();
    const r = await runCommand('pin-hosts', ['--node', 'node-0'], dir, fakeCluster(inventoryOf(), simple));
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/Summary:\n {2}node-0 {2}changed {2}1 change in 1 step\n0 ok, 1 changed, 0 failed, 0 unreachable \(1 change\)\nlog of this run: .*-pin-hosts-\d+\.log\n$/);
  });

  it('a failed machine: its error is printed once, in the summary', async () => {
    const dir = projectDir();
    const fakes = fakeCluster(inventoryOf(), simple);
    fakes.get('node-1')!.uploadError = new Error('node-1: SFTP: Permission denied');
    const r = await runCommand('pin-hosts', [], dir, fakes);
    expect(r.code).toBe(1);
    expect(r.stdout.split('SFTP: Permission denied')).toHaveLength(2);
    expect(r.stdout).toMatch(/^node-1: pin-hosts: failed$/m);
    expect(r.stdout).toMatch(/^ {2}node-1 {2}failed +pin-hosts: SFTP: Permission denied$/m);
  });

  it('--node touches only the named machines; --only with an unknown step is a usage error', async () => {
    const dir = projectDir();
    const fakes = fakeCluster(inventoryOf(), simple);
    const r = await runCommand('pin-hosts', ['--node', 'node-1', '--json'], dir, fakes);
    expect(JSON.parse(r.stdout).results.map((x: { machine: string }) => x.machine)).toEqual(['node-1']);
    expect(fakes.get('node-0')!.commands).toEqual([]);
    expect(fakes.get('server')!.commands).toEqual([]);
    const bad = await runCommand('pin-hosts', ['--only', 'pin-host'], dir, fakes);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('error: unknown step "pin-host" for "hardway pin-hosts"\n  hint: did you mean "pin-hosts"? its steps are: pin-hosts');
  });

  it('a command whose steps are not written yet fails with "not implemented yet", touching nothing', async () => {
    const dir = projectDir();
    const fakes = fakeCluster(inventoryOf(), simple);
    // A registry that has only pin-hosts, as before the cluster steps existed.
    const onlyPinHosts = { 'pin-hosts': STEPS['pin-hosts'] };
    const r = await runCommand('up', ['--json'], dir, fakes, undefined, onlyPinHosts);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/"hardway up" is not implemented yet: steps preflight, distribute, bootstrap-etcd, .*, verify not available/);
    expect(r.stderr).toContain('hint: --only pin-hosts runs what exists');
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: false, results: [] });
    for (const f of fakes.values()) expect(f.commands).toEqual([]);
    const ok = await runCommand('up', ['--only', 'pin-hosts', '--json'], dir, fakes, undefined, onlyPinHosts);
    expect(JSON.parse(ok.stdout)).toMatchObject({ ok: true, changed: 3 });
  });
});

describe('run lock', () => {
  it('refuses a second run against the same project while one runs, naming the pid', async () => {
    const dir = projectDir();
    const held = acquireRunLock(dir, 'pin-hosts', { pid: process.pid, alive: () => true });
    try {
      const fakes = fakeCluster(inventoryOf(), simple);
      const r = await runCommand('pin-hosts', [], dir, fakes);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`error: another hardway run is using this project: pid ${process.pid} on ${hostname()} ("hardway pin-hosts"`);
      for (const f of fakes.values()) expect(f.commands).toEqual([]);
    } finally {
      held.release();
    }
    expect(readdirSync(dir)).not.toContain(LOCK_FILE);
  });

  it('takes over a stale lock whose process is dead', async () => {
    const dir = projectDir();
    // A pid that surely is not running: a child that already exited.
    const dead = spawnSync(process.execPath, ['-e', '0']).pid!;
    writeFileSync(join(dir, LOCK_FILE), JSON.stringify({ pid: dead, host: hostname(), command: 'pin-hosts', started: 'earlier' }));
    const r = await runCommand('pin-hosts', ['--json'], dir, fakeCluster(inventoryOf(), simple));
    expect(r.code).toBe(0);
    expect(readdirSync(dir)).not.toContain(LOCK_FILE);
  });
});

describe('run log', () => {
  it('is 0600 in a 0700 logs/ dir and has every remote command with its output', async () => {
    const dir = projectDir();
    const fakes = fakeCluster(inventoryOf(), simple);
    fakes.get('node-0')!.getentOverrides.set('server', '10.240.0.10  server.kubernetes.local server');
    await runCommand('pin-hosts', [], dir, fakes);
    const logs = join(dir, 'logs');
    expect(statSync(logs).mode & 0o777).toBe(0o700);
    const [file] = readdirSync(logs);
    expect(statSync(join(logs, file!)).mode & 0o777).toBe(0o600);
    const text = readFileSync(join(logs, file!), 'utf8');
    expect(text).toMatch(/node-0: read \/etc\/hosts: mode 0644 root:root 20 bytes/);
    expect(text).toMatch(/node-0: upload \/etc\/hosts mode 0644 owner root:root \(\d+ bytes\)/);
    expect(text).toMatch(/node-0: probe names \(exit 0\): awk -v want='server server\.kubernetes\.local [\s\S]*?getent hosts[^\n]*\n\s+--- stdout:\n\s+server 10\.240\.0\.10  server\.kubernetes\.local server/);
  });
});

describe('jumpbox', () => {
  it('--local adds the jumpbox through the local transport', async () => {
    const dir = projectDir();
    const jumpbox = new FakeTransport('jumpbox', { files: { '/etc/hosts': '127.0.0.1 localhost\n' } });
    const r = await runCommand('pin-hosts', ['--local', '--node', 'server', '--json'], dir, fakeCluster(inventoryOf(), simple), jumpbox);
    expect(JSON.parse(r.stdout).results.map((x: { machine: string; status: string }) => `${x.machine}:${x.status}`)).toEqual(['server:changed', 'jumpbox:changed']);
  });
});
