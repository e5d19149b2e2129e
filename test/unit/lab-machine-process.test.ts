// A lab machine starts as `sh -c 'enter cgroups; exec systemd-nspawn ...'`: while the shell execs,
// /proc/PID/cmdline reads empty for a moment, and that must not look like a machine that died.
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isMachineProcess } from '../../src/lab/boot.ts';

describe('isMachineProcess', () => {
  it('stays true through the exec from the starting shell to nspawn, and is false once it exited', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hw-nspawn-'));
    const fake = join(dir, 'systemd-nspawn');
    writeFileSync(fake, '#!/bin/sh\nsleep 0.2\n');
    chmodSync(fake, 0o755);
    let wrong = 0;
    for (let k = 0; k < 20; k++) {
      const child = spawn('sh', ['-c', 'for d in a b c; do :; done; exec "$@"', 'sh', fake, '-M', 'lab-node-0'], { stdio: 'ignore' });
      const exited = new Promise((r) => child.on('exit', r));
      const until = Date.now() + 80; // well before the fake nspawn ends
      while (Date.now() < until) if (!isMachineProcess(child.pid!, 'lab-node-0')) wrong++;
      expect(isMachineProcess(child.pid!, 'lab-node-1')).toBe(false);
      await exited;
      expect(isMachineProcess(child.pid!, 'lab-node-0')).toBe(false);
    }
    expect(wrong).toBe(0);
    rmSync(dir, { recursive: true, force: true });
  });

  it('is false for a pid now held by a kernel thread (empty cmdline too)', () => {
    // PF_KTHREAD in /proc/PID/stat's flags (field 9).
    const kthread = readdirSync('/proc').filter((d) => /^\d+$/.test(d)).find((d) => {
      try {
        return (Number(readFileSync(`/proc/${d}/stat`, 'utf8').replace(/^.*\) /, '').split(' ')[6]) & 0x00200000) !== 0;
      } catch {
        return false;
      }
    });
    expect(kthread, 'this host shows no kernel thread in /proc').toBeDefined();
    expect(readFileSync(`/proc/${kthread}/cmdline`, 'utf8')).toBe('');
    expect(isMachineProcess(Number(kthread), 'lab-node-0')).toBe(false);
  });
});
