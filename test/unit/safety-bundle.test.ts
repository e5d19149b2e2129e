// Issue 34, item 12: `doctor --bundle` prints one JSON object with --json whatever happens (a full
// disk included) and names the bundle in it; a huge file in pki/ is searched for secrets as a
// stream, not read whole; an existing file at the bundle's path is replaced only with --force; the
// bundle is never written inside pki/. The machines are on 127.0.0.9:9, where nothing listens (each
// is an "unreachable" finding at once); the full disk is a real tmpfs, filled up.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, statSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { pkiRedactor } from '../../src/doctor/pki-redactor.ts';
import { runCli } from '../helpers/cli.ts';
import { unpackBundle } from '../helpers/unpack-bundle.ts';
import { failedCleanly, fillUp, loopbackProject, tmpfs, type Mount } from './safety.helpers.ts';

const mounts: Mount[] = [];
afterEach(() => {
  for (const m of mounts.splice(0)) m.unmount();
});

/** `hardway doctor ARGS` in `dir`, with no SSH key or kubectl of this machine's user to find. */
const doctor = (dir: string, ...args: string[]) => runCli(['doctor', ...args], dir, { HOME: dir, PATH: '/usr/bin:/bin' });

/** The lines of stdout, each of which must be a JSON object; there must be exactly one. */
function oneObject(stdout: string): Record<string, unknown> {
  const lines = stdout.split('\n').filter((l) => l !== '');
  expect(lines, stdout).toHaveLength(1);
  return JSON.parse(lines[0]!) as Record<string, unknown>;
}

describe('doctor --bundle --json: one object, naming the bundle', () => {
  it('written: the findings and the bundle\'s absolute path, given a relative one', async () => {
    const p = loopbackProject();
    const run = await doctor(p.dir, '--json', '--bundle', 'b.tar.gz');
    expect(run.code, run.stderr).toBe(1); // the machines do not answer
    const o = oneObject(run.stdout);
    expect(o.bundle).toBe(join(p.dir, 'b.tar.gz'));
    expect((o.findings as unknown[]).length).toBeGreaterThan(0);
    expect(existsSync(join(p.dir, 'b.tar.gz'))).toBe(true);
  }, 30_000);

  it('on a full disk: still one object, with the findings, the bundle and the error (exit 1); no stack, no temp file', async () => {
    const p = loopbackProject();
    const full = tmpfs(64);
    mounts.push(full);
    fillUp(full.dir, 0);
    const file = join(full.dir, 'b.tar.gz');
    const run = await doctor(p.dir, '--json', '--bundle', file);
    expect(run.code, run.stderr).toBe(1);
    const o = oneObject(run.stdout);
    expect(o.ok).toBe(false);
    expect(o.bundle).toBe(file);
    expect((o.findings as unknown[]).length).toBeGreaterThan(0);
    expect((o.error as { message: string }).message).toMatch(/no space left on the device \(ENOSPC/);
    expect(run.stderr).toMatch(/^error: .*no space left on the device/m);
    expect(run.stderr).not.toMatch(/internal error|\n\s+at /);
    expect(existsSync(file)).toBe(false);
  }, 30_000);
});

describe('a huge file in pki/', () => {
  it('600 MB (sparse) in pki/: the bundle is written, no "internal error"', async () => {
    const p = loopbackProject();
    mkdirSync(join(p.dir, 'pki'));
    writeFileSync(join(p.dir, 'pki/huge.img'), '');
    truncateSync(join(p.dir, 'pki/huge.img'), 600 * 1024 * 1024);
    const run = await doctor(p.dir, '--bundle', 'b.tar.gz');
    expect(run.code, run.stderr).toBe(1);
    expect(run.stderr).not.toMatch(/internal error|\n\s+at /);
    expect(run.stderr).toContain('support bundle: b.tar.gz');
    expect(statSync(join(p.dir, 'b.tar.gz')).size).toBeGreaterThan(0);
  }, 60_000);

  it('a secret on a line of a file larger than the whole-file limit is still learnt, read line by line; an endless line is read past', async () => {
    const p = loopbackProject();
    mkdirSync(join(p.dir, 'pki'));
    const token = randomBytes(24).toString('hex');
    const value = randomBytes(33).toString('base64');
    writeFileSync(join(p.dir, 'pki/big.yaml'), `${'#'.repeat(3 << 20)}\n${token}\nkey: ${value}\nlast line without newline ${token}x`);
    const redactor = await pkiRedactor(p.dir);
    expect(redactor.redact(`a ${token} b`)).toBe('a [REDACTED] b');
    expect(redactor.redact(`v ${value}`)).toBe('v [REDACTED]');
    expect(redactor.redact('#'.repeat(100))).toBe('#'.repeat(100)); // the 3 MB line is no secret
  });

  it('a small file is learnt whole and line by line, as before', async () => {
    const p = loopbackProject();
    mkdirSync(join(p.dir, 'pki/machines/node-0'), { recursive: true });
    writeFileSync(join(p.dir, 'pki/machines/node-0/short.txt'), 'pass-1234');
    writeFileSync(join(p.dir, 'pki/ca.crt'), 'a-certificate-is-no-secret\n');
    const redactor = await pkiRedactor(p.dir);
    expect(redactor.redact('x pass-1234 y')).toBe('x [REDACTED] y');
    expect(redactor.redact('a-certificate-is-no-secret')).toBe('a-certificate-is-no-secret');
  });
});

describe('where the bundle may be written', () => {
  it('an existing file at the path is refused without --force (exit 2, nothing asked, the file kept); --force replaces it', async () => {
    const p = loopbackProject();
    const file = join(p.dir, 'notes.tar.gz');
    writeFileSync(file, 'my own archive\n');
    const refused = await doctor(p.dir, '--bundle', 'notes.tar.gz');
    failedCleanly(refused, 2, '--bundle "notes.tar.gz": a file is already there; hardway does not replace it unless told to');
    expect(refused.stderr).toContain('hint: pass --force to replace it, or name another file');
    expect(refused.stdout).toBe('');
    expect(readFileSync(file, 'utf8')).toBe('my own archive\n');
    const forced = await doctor(p.dir, '--bundle', 'notes.tar.gz', '--force');
    expect(forced.code, forced.stderr).toBe(1);
    expect([...unpackBundle(file).keys()]).toContain('hardway-doctor-bundle/README.txt');
  }, 30_000);

  it('a directory at the path is refused, --force or not', async () => {
    const p = loopbackProject();
    mkdirSync(join(p.dir, 'd.tar.gz'));
    failedCleanly(await doctor(p.dir, '--bundle', 'd.tar.gz', '--force'), 2, '--bundle "d.tar.gz": d.tar.gz is a directory, not a file; nothing was written');
  });

  it('inside pki/ (or a directory linked into it) is refused before any machine is asked', async () => {
    const p = loopbackProject();
    mkdirSync(join(p.dir, 'pki/machines'), { recursive: true });
    for (const path of ['pki/b.tar.gz', 'pki/machines/b.tar.gz']) {
      const run = await doctor(p.dir, '--bundle', path);
      failedCleanly(run, 2, `--bundle "${path}" is inside pki/ (pki), which holds the cluster's keys; the bundle is made to be shared`);
      expect(run.stdout).toBe('');
      expect(existsSync(join(p.dir, path))).toBe(false);
    }
    symlinkSync(join(p.dir, 'pki'), join(p.dir, 'keys'));
    failedCleanly(await doctor(p.dir, '--bundle', 'keys/b.tar.gz'), 2, '--bundle "keys/b.tar.gz" is inside pki/');
  });

  it('--force without --bundle is refused', async () => {
    const p = loopbackProject();
    failedCleanly(await doctor(p.dir, '--force'), 2, '--force replaces the file of --bundle FILE, and there is none');
  });
});
