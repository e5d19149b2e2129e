// A lab machine starts as `sh -c 'enter cgroups; exec systemd-nspawn ...'`: while the shell execs,
// /proc/PID/cmdline reads empty for a moment, and that must not look like a machine that died.
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
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
});
