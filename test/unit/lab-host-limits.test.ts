// The per-host limits of a large lab: computed from the number of machines, raised only ("at
// least": a host value already higher stays), said aloud, put back by the last lab down; a host
// that refuses a write stops the lab with the exact setting. And the reason a machine gives for
// not booting, taken from its journal.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { limitHint, reasonLines } from '../../src/lab/boot-journal.ts';
import { largeLabSettings } from '../../src/lab/host-limits.ts';
import { holdHostSettings, releaseHostSettings, type Sysctl } from '../../src/lab/host-settings.ts';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
const tmp = () => {
  const d = mkdtempSync(join(tmpdir(), 'hw-limits-'));
  dirs.push(d);
  return d;
};
const KERNEL_DEFAULTS: Record<string, string> = {
  'fs.inotify.max_user_instances': '128', 'fs.inotify.max_user_watches': '65536', 'kernel.keys.maxkeys': '200',
  'kernel.keys.maxbytes': '20000', 'kernel.pid_max': '32768', 'kernel.threads-max': '192729',
  'net.ipv4.neigh.default.gc_thresh3': '1024', 'net.ipv4.neigh.default.gc_thresh2': '512', 'net.ipv4.neigh.default.gc_thresh1': '128',
};
function fakeSys(values: Record<string, string>, refuse?: string): Sysctl & { writes: string[] } {
  const writes: string[] = [];
  return {
    writes,
    get: (k) => values[k]!,
    set: (k, v) => {
      if (k === refuse) throw new Error(`EROFS: read-only file system, open '/proc/sys/${k.replaceAll('.', '/')}'`);
      values[k] = v;
      writes.push(`${k}=${v}`);
    },
  };
}
const valueOf = (n: number) => Object.fromEntries(largeLabSettings(n).map((s) => [s.key, Number(s.value)]));

describe('limits of a large lab', () => {
  it('are the kernel defaults for a small lab and grow with the machines', async () => {
    for (const s of largeLabSettings(4)) expect(Number(s.value)).toBeLessThanOrEqual(Number(KERNEL_DEFAULTS[s.key]));
    const big = valueOf(101);
    expect(big['fs.inotify.max_user_instances']).toBe(3232);
    expect(big['fs.inotify.max_user_watches']).toBe(827392);
    expect(big['kernel.pid_max']).toBe(103424);
    expect(big['net.ipv4.neigh.default.gc_thresh3']).toBe(23634);
    expect(big['net.ipv4.neigh.default.gc_thresh1']).toBeLessThan(big['net.ipv4.neigh.default.gc_thresh2']!);
    // The case of the issue: 33 machines need more than the default 128 inotify instances.
    expect(valueOf(33)['fs.inotify.max_user_instances']).toBe(1056);
    expect(largeLabSettings(33).every((s) => s.atLeast && s.why.includes('33 lab machine(s)'))).toBe(true);
  });

  it('raise only what is below, never lower a higher host value, and put back what they raised', async () => {
    const dir = tmp();
    const values: Record<string, string> = { ...KERNEL_DEFAULTS, 'fs.inotify.max_user_watches': '1000000' };
    const sys = fakeSys(values);
    const lines = await holdHostSettings('/labs/big', largeLabSettings(33), sys, dir);
    expect(lines).toContain('host setting fs.inotify.max_user_instances: 128 -> 1056 (inotify instances (systemd, logind, dbus, kubelet) of 33 lab machine(s) on this host; put back when the last lab goes down)');
    expect(values['fs.inotify.max_user_watches']).toBe('1000000'); // 270336 would be lower: kept
    expect(lines.some((l) => l.includes('max_user_watches'))).toBe(false);
    expect(values['kernel.threads-max']).toBe('192729');
    expect(await holdHostSettings('/labs/small', largeLabSettings(35), sys, dir)).toEqual([
      'host setting fs.inotify.max_user_instances: 1056 -> 1120 (inotify instances (systemd, logind, dbus, kubelet) of 35 lab machine(s) on this host; put back when the last lab goes down)',
      ...lines.filter((l) => !/inotify|keys|pid_max|gc_thresh/.test(l)),
      'host setting kernel.keys.maxkeys: 660 -> 700 (keyrings (runc, systemd) of 35 lab machine(s) on this host; put back when the last lab goes down)',
      'host setting kernel.keys.maxbytes: 66000 -> 70000 (keyrings (runc, systemd) of 35 lab machine(s) on this host; put back when the last lab goes down)',
      'host setting kernel.pid_max: 33792 -> 35840 (processes and threads of 35 lab machine(s) on this host; put back when the last lab goes down)',
      'host setting net.ipv4.neigh.default.gc_thresh3: 3234 -> 3570 (ARP entries (one table for every namespace) of 35 lab machine(s) on this host; put back when the last lab goes down)',
      'host setting net.ipv4.neigh.default.gc_thresh2: 1617 -> 1785 (ARP entries (one table for every namespace) of 35 lab machine(s) on this host; put back when the last lab goes down)',
      'host setting net.ipv4.neigh.default.gc_thresh1: 405 -> 447 (ARP entries (one table for every namespace) of 35 lab machine(s) on this host; put back when the last lab goes down)',
    ]);
    const alive = (p: string) => p.startsWith('/labs/');
    expect(await releaseHostSettings('/labs/big', sys, dir, alive)).toEqual([]);
    const restored = await releaseHostSettings('/labs/small', sys, dir, alive);
    expect(restored).toContain('host setting fs.inotify.max_user_instances: 1120 -> 128 (put back: no lab left on this host)');
    expect(values).toEqual({ ...KERNEL_DEFAULTS, 'fs.inotify.max_user_watches': '1000000' });
  });

  it('stop with the exact setting when the host refuses a write, and the changes made before it are still put back', async () => {
    const dir = tmp();
    const values = { ...KERNEL_DEFAULTS };
    const sys = fakeSys(values, 'kernel.pid_max');
    await expect(holdHostSettings('/labs/big', largeLabSettings(101), sys, dir)).rejects.toThrow(
      /cannot set host setting kernel\.pid_max to 103424 \(it is 32768\): EROFS/);
    const refused = await holdHostSettings('/labs/big', largeLabSettings(101), sys, dir).then(() => undefined, (e: unknown) => e as { hint: string; exitCode: number });
    expect(refused?.hint).toMatch(/sysctl -w kernel\.pid_max=103424/);
    expect(refused?.exitCode).toBe(1);
    expect(values['fs.inotify.max_user_instances']).toBe('3232');
    await releaseHostSettings('/labs/big', sys, dir, () => false);
    expect(values).toEqual(KERNEL_DEFAULTS);
  });
});

describe('the reason a machine gives for not booting', () => {
  const entry = (PRIORITY: number, SYSLOG_IDENTIFIER: string, MESSAGE: string, t = 1_500_000, more: object = {}) =>
    ({ PRIORITY: String(PRIORITY), SYSLOG_IDENTIFIER, MESSAGE, _PID: '1', __MONOTONIC_TIMESTAMP: String(t), ...more });

  it('is its errors, without the lines every healthy boot logs, repeated ones said once', async () => {
    const lines = reasonLines([
      entry(3, 'systemd-journald', 'Failed to connect to notify socket: Connection refused'),
      entry(3, 'sshd', 'error: kex_exchange_identification: Connection closed by remote host'),
      entry(4, 'systemd', 'Some warning'),
      entry(3, 'systemd', 'Failed to create inotify object: Too many open files', 2_000_000),
      entry(3, 'systemd', 'Failed to create inotify object: Too many open files', 2_100_000),
      entry(3, 'systemd', 'Failed to start ssh.service - OpenBSD Secure Shell server.', 2_500_000),
    ]);
    expect(lines).toEqual([
      '[+0.6 s] systemd[1]: Failed to create inotify object: Too many open files (2 times)',
      '[+1.0 s] systemd[1]: Failed to start ssh.service - OpenBSD Secure Shell server.',
    ]);
    expect(limitHint(lines)).toMatch(/fs\.inotify\.max_user_instances/);
  });

  it('adds what a failed unit wrote itself (info lines), and nothing of units that did not fail', async () => {
    const lines = reasonLines([
      entry(6, 'sshd', '/etc/ssh/sshd_config line 1: Bad configuration option: Nonsense', 1_500_000, { _SYSTEMD_UNIT: 'ssh.service' }),
      entry(6, 'cloud-init', 'all fine', 1_600_000, { _SYSTEMD_UNIT: 'cloud-init.service' }),
      entry(3, 'systemd', 'Failed to start ssh.service - OpenBSD Secure Shell server.', 1_700_000, { UNIT: 'ssh.service' }),
    ]);
    expect(lines).toEqual([
      '[+0.0 s] sshd[1]: /etc/ssh/sshd_config line 1: Bad configuration option: Nonsense',
      '[+0.2 s] systemd[1]: Failed to start ssh.service - OpenBSD Secure Shell server.',
    ]);
  });

  it('falls back to warnings when there is no error, and has no hint for an unrelated failure', async () => {
    expect(reasonLines([entry(6, 'systemd', 'Started x'), entry(4, 'sshd', 'warned', 3_000_000)])).toEqual(['[+1.5 s] sshd[1]: warned']);
    expect(limitHint(['sshd[1]: /etc/ssh/sshd_config line 1: Bad configuration option: Nonsense'])).toBeUndefined();
  });
});
