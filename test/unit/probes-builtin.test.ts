// Probes answered by the facts shell's builtins (no process of their own), run under real shells
// against temp files: each finds what the command it replaced found (swapon, grep -Ec, hostname).
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { fstabSwapCountCommand, fstabSwapLines, swapDevices, swapNamesCommand } from '../../src/probes/system.ts';
import { hostname, hostnameCommand } from '../../src/probes/names.ts';
import type { Command } from '../../src/shell.ts';

const SHELLS = ['sh', 'dash'];
const dir = mkdtempSync(join(tmpdir(), 'hw-probes-builtin-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** stdout of `cmd` under `shell`, with an empty PATH: a command that starts a process fails. */
function run(shell: string, cmd: Command): string {
  const r = spawnSync(`/bin/${shell}`, ['-c', cmd.text], { env: { PATH: '/nonexistent' }, encoding: 'utf8' });
  expect(r.stderr).toBe('');
  return r.stdout;
}

/** The regex the old probe counted with and worker-os's sed comments out. */
const SWAP_RE = '^[[:space:]]*[^#[:space:]]+[[:space:]]+[^[:space:]]+[[:space:]]+swap[[:space:]]';

describe('swap devices from /proc/swaps (swapNamesCommand)', () => {
  it.each(SHELLS)('%s: every name after the header, on one line', (shell) => {
    const file = join(dir, `swaps-${shell}`);
    writeFileSync(file, 'Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n/dev/vda3                               partition\t1048572\t\t0\t\t-2\n/swap\\040file                           file\t\t524284\t\t0\t\t-3\n');
    const out = run(shell, swapNamesCommand(file));
    expect(out).not.toContain('\n');
    expect(swapDevices.ask().parse({ code: 0, stdout: out })).toEqual(['/dev/vda3', '/swap\\040file']);
    // No swap in use: the header alone.
    writeFileSync(file, 'Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n');
    expect(swapDevices.ask().parse({ code: 0, stdout: run(shell, swapNamesCommand(file)) })).toEqual([]);
  });

  it('reads this host\'s /proc/swaps as swapon does', () => {
    const want = spawnSync('swapon', ['--noheadings', '--show=NAME'], { encoding: 'utf8' }).stdout.split('\n').map((l) => l.trim()).filter(Boolean);
    expect(swapDevices.ask().parse({ code: 0, stdout: run('dash', swapNamesCommand()) })).toEqual(want);
  });
});

describe('swap lines of /etc/fstab (fstabSwapCountCommand)', () => {
  const lines = [
    'UUID=1 / ext4 errors=remount-ro 0 1',
    'UUID=2 none swap sw 0 0',
    '  /dev/vda3\tnone\tswap\tsw\t0\t0',
    '#UUID=3 none swap sw 0 0',
    '  # /dev/x none swap sw',
    '/swapfile none swap',
    '/swapfile2 none swap   ',
    '/swapfile3 none swapx sw',
    '/dev/sdb1 /mnt/swap ext4 defaults',
    '',
    `# UUID=4 none swap sw 0 0 # hardway: swap off for the kubelet`,
    '/dev/last none swap defaults 0 0',
  ];

  it.each(SHELLS)('%s: counts the lines grep -Ec counted (the lines the sed comments out), a last line without newline too', (shell) => {
    const file = join(dir, `fstab-${shell}`);
    for (const text of [lines.join('\n') + '\n', lines.join('\n'), '', lines.slice(0, 1).join('\n') + '\n']) {
      writeFileSync(file, text);
      const grep = Number(spawnSync('grep', ['-Ec', SWAP_RE, file], { encoding: 'utf8' }).stdout.trim());
      expect(fstabSwapLines.ask().parse({ code: 0, stdout: run(shell, fstabSwapCountCommand(file)) })).toBe(grep);
    }
    writeFileSync(file, lines.join('\n') + '\n');
    expect(fstabSwapLines.ask().parse({ code: 0, stdout: run(shell, fstabSwapCountCommand(file)) })).toBe(4);
  });

  it('counts 0 once worker-os\'s sed has commented the swap lines out', () => {
    const file = join(dir, 'fstab-sed');
    writeFileSync(file, lines.join('\n') + '\n');
    execFileSync('sed', ['-i', '-E', 's/^([[:space:]]*[^#[:space:]]+[[:space:]]+[^[:space:]]+[[:space:]]+swap[[:space:]].*)$/# \\1 # hardway/', file]);
    expect(fstabSwapLines.ask().parse({ code: 0, stdout: run('dash', fstabSwapCountCommand(file)) })).toBe(0);
  });

  it('answers 0 when there is no fstab', () => {
    const r = spawnSync('/bin/dash', ['-c', fstabSwapCountCommand(join(dir, 'none')).text + ' 2>/dev/null'], { env: { PATH: '/nonexistent' }, encoding: 'utf8' });
    expect(fstabSwapLines.ask().parse({ code: r.status ?? 1, stdout: r.stdout })).toBe(0);
  });
});

describe('the hostname from /proc/sys/kernel/hostname (hostnameCommand)', () => {
  it.each(SHELLS)('%s: the whole name, as `hostname` prints it', (shell) => {
    const want = execFileSync('hostname', { encoding: 'utf8' }).trim();
    const out = run(shell, hostnameCommand());
    expect(out).not.toContain('\n');
    expect(hostname.ask().parse({ code: 0, stdout: out })).toBe(want);
    const file = join(dir, `hostname-${shell}`);
    writeFileSync(file, 'node-12.long-name\n');
    expect(hostname.ask().parse({ code: 0, stdout: run(shell, hostnameCommand(file)) })).toBe('node-12.long-name');
  });
});
