// The host-wide kernel settings a lab needs for real kubelets: set only where they differ, said
// aloud, recorded once, and put back only when the last lab that holds them goes down.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { holdHostSettings, releaseHostSettings, type HostSetting, type Sysctl } from '../../src/lab/host-settings.ts';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

function fakeSys(values: Record<string, string>): Sysctl & { writes: string[] } {
  const writes: string[] = [];
  return { writes, get: (k) => values[k]!, set: (k, v) => { values[k] = v; writes.push(`${k}=${v}`); } };
}

const SETTINGS: HostSetting[] = [
  { key: 'vm.overcommit_memory', value: '1', why: 'the kubelet sets it at start' },
  { key: 'kernel.panic', value: '10', why: 'the kubelet sets it at start' },
];

describe('host settings of the lab', () => {
  it('six labs starting at once in processes of their own: the record lists every one of them (hardway\'s file lock)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hw-host-race-'));
    dirs.push(dir);
    const go = join(dir, 'go');
    const holders = Array.from({ length: 6 }, (_, i) => `/labs/l${i}`);
    const repo = join(import.meta.dirname, '../..');
    const runs = holders.map((h) => {
      const child = spawn(process.execPath, ['--import', 'tsx', join(repo, 'test/fixtures/host-settings-holder.ts'), dir, h, go], { cwd: repo, stdio: ['ignore', 'pipe', 'inherit'] });
      let out = '';
      child.stdout.on('data', (b) => (out += String(b)));
      const ready = new Promise<void>((r) => child.stdout.on('data', () => out.includes('ready') && r()));
      const done = new Promise<string>((r) => child.on('close', () => r(out)));
      return { ready, done };
    });
    await Promise.all(runs.map((r) => r.ready));
    writeFileSync(go, '');
    expect(await Promise.all(runs.map((r) => r.done))).toEqual(holders.map(() => 'ready\nheld\n'));
    const record = JSON.parse(readFileSync(join(dir, 'host-settings.json'), 'utf8')) as { holders: string[] };
    expect([...record.holders].sort()).toEqual(holders);
  }, 60_000);

  it('sets only what differs, says each change, and keeps the first original through a second lab', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hw-host-'));
    dirs.push(dir);
    const values = { 'vm.overcommit_memory': '0', 'kernel.panic': '10' };
    const sys = fakeSys(values);
    const lines = await holdHostSettings('/labs/a', SETTINGS, sys, dir);
    expect(lines).toEqual(['host setting vm.overcommit_memory: 0 -> 1 (the kubelet sets it at start; put back when the last lab goes down)']);
    expect(await holdHostSettings('/labs/b', SETTINGS, sys, dir)).toEqual([]);
    const alive = (p: string) => p.startsWith('/labs/');
    // The first lab down leaves the settings: the other lab still needs them.
    expect(await releaseHostSettings('/labs/a', sys, dir, alive)).toEqual([]);
    expect(values['vm.overcommit_memory']).toBe('1');
    expect(await releaseHostSettings('/labs/b', sys, dir, alive)).toEqual(['host setting vm.overcommit_memory: 1 -> 0 (put back: no lab left on this host)']);
    expect(values).toEqual({ 'vm.overcommit_memory': '0', 'kernel.panic': '10' });
    expect(sys.writes).toEqual(['vm.overcommit_memory=1', 'vm.overcommit_memory=0']);
  });

  it('a holder whose lab state is gone does not keep the settings forever', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hw-host-'));
    dirs.push(dir);
    const values = { 'vm.overcommit_memory': '0', 'kernel.panic': '1' };
    const sys = fakeSys(values);
    await holdHostSettings('/labs/crashed', SETTINGS, sys, dir);
    await holdHostSettings('/labs/b', SETTINGS, sys, dir);
    expect(await releaseHostSettings('/labs/b', sys, dir, () => false)).toHaveLength(2);
    expect(values).toEqual({ 'vm.overcommit_memory': '0', 'kernel.panic': '1' });
  });
});
