// The local transport (pin-hosts --local, tests): same contract as SSH, over child_process.
// Every path is inside a mkdtemp directory.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CommandError } from '../../src/errors.ts';
import { sh, type Command } from '../../src/shell.ts';
import { CommandTimeoutError, LocalTransport } from '../../src/transport/index.ts';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'hardway-local-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('LocalTransport', () => {
  it('returns code, stdout and stderr, feeds stdin, and takes only sh Commands', async () => {
    const t = new LocalTransport({ machine: 'jumpbox' });
    expect(await t.exec(sh`echo out; echo err >&2; exit 4`)).toEqual({ code: 4, stdout: 'out\n', stderr: 'err\n' });
    expect((await t.exec(sh`tr a-z A-Z`, { stdin: 'abc' })).stdout).toBe('ABC');
    await expect(t.exec('echo' as unknown as Command)).rejects.toThrow(/jumpbox: exec takes a Command built with sh/);
  });

  it('kills the whole process group of a command that times out', async () => {
    const t = new LocalTransport();
    const marker = join(dir, 'still-running');
    const err = await t.exec(sh`(sleep 2; touch ${marker}) & sleep 30`, { timeoutMs: 300 }).catch((e) => e);
    expect(err).toBeInstanceOf(CommandTimeoutError);
    expect(err.message).toMatch(/^local: command timed out after 300ms and was killed: \(sleep 2; touch /);
    await new Promise((r) => setTimeout(r, 2500));
    expect(readdirSync(dir)).toEqual([]);
  });

  it('uploads atomically with mode and owner, creating parents and cleaning stale temp files', async () => {
    const t = new LocalTransport();
    const target = join(dir, 'a/b/c.conf');
    await t.upload(target, { data: Buffer.from('one') }, { mode: 0o640 });
    expect(readFileSync(target, 'utf8')).toBe('one');
    expect(statSync(target).mode & 0o7777).toBe(0o640);
    writeFileSync(join(dir, 'a/b/.c.conf.hardway-tmp-0123456789ab'), 'partial');
    const src = join(dir, 'src.bin');
    writeFileSync(src, Buffer.alloc(3 * 1024 * 1024, 7));
    await t.upload(target, { file: src }, { mode: 0o600, owner: 'nobody:nogroup' });
    const st = statSync(target);
    expect(st.uid).toBe(Number(execFileSync('id', ['-u', 'nobody'], { encoding: 'utf8' })));
    expect(st.mode & 0o7777).toBe(0o600);
    expect(createHash('sha256').update(readFileSync(target)).digest('hex')).toBe(createHash('sha256').update(readFileSync(src)).digest('hex'));
    expect(readdirSync(join(dir, 'a/b'))).toEqual(['c.conf']);
  });

  it('an unknown owner fails with a CommandError and leaves nothing behind', async () => {
    const t = new LocalTransport();
    const err = await t.upload(join(dir, 'x'), { data: Buffer.from('x') }, { mode: 0o600, owner: 'root:no-such-group' }).catch((e) => e);
    expect(err).toBeInstanceOf(CommandError);
    expect(err.message).toContain('owner root:no-such-group: user or group not found');
    expect(readdirSync(dir)).toEqual([]);
  });
});
