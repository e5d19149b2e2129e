// Issue 24, items 7 and 8: a file-system error is a clear message naming the path, exit 1 or 2,
// never a stack trace, on real file systems made for the test (a full tmpfs, a read-only bind
// mount). A failed certs leaves no key without its certificate; a failed lock attempt leaves no
// temp file; a lock that is a link (even to nothing) is named for what it is.
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { saveSnapshot } from '../../src/etcd-snapshot/save.ts';
import { loadInventory } from '../../src/inventory.ts';
import { runCli } from '../helpers/cli.ts';
import { EXAMPLE_MACHINES, hardway, makeProject } from './certs.helpers.ts';
import { fakeCluster, inventoryOf, projectDir, runCommand } from './engine.helpers.ts';
import { failedCleanly, fillUp, filesUnder, readOnlyView, tmpfs, type Mount } from './safety.helpers.ts';

const EC = 'keyAlgorithm: ecdsa-p256\n';
const mounts: Mount[] = [];
afterEach(() => {
  for (const m of mounts.splice(0)) m.unmount();
});

/** A project (machines.txt, and cluster.yaml if given) on a tmpfs of `sizeKb` KiB, then filled up but for `freePages` pages. */
function projectOnFullDisk(sizeKb: number, freePages: number, cluster?: string): string {
  const m = tmpfs(sizeKb);
  mounts.push(m);
  writeFileSync(join(m.dir, 'machines.txt'), EXAMPLE_MACHINES);
  if (cluster !== undefined) writeFileSync(join(m.dir, 'cluster.yaml'), cluster);
  fillUp(m.dir, freePages);
  return m.dir;
}

/** Every file of pki/, recursively. */
const pkiFiles = (dir: string) => (existsSync(join(dir, 'pki')) ? filesUnder(join(dir, 'pki')) : []);

describe('no space left on the device (ENOSPC)', () => {
  it('certs stops with exit 1 naming the file; no key is left without its certificate, no temp file', async () => {
    // Room for a few files only: the CAs fit, the leaves do not.
    const dir = projectOnFullDisk(256, 6, EC);
    const run = await runCli(['certs'], dir);
    failedCleanly(run, 1, /: no space left on the device \(ENOSPC on write\)$/);
    expect(run.stderr).toContain('hint: free some space on that file system');
    const files = pkiFiles(dir);
    for (const key of files.filter((f) => f.endsWith('.key'))) expect(files, key).toContain(key.replace(/\.key$/, '.crt'));
    expect(files.filter((f) => f.endsWith('.tmp'))).toEqual([]);
    expect(readdirSync(dir).filter((f) => f.includes('.hardway.lock'))).toEqual([]);
  });

  it('a lock that cannot be written is exit 1 naming it, and leaves no .hardway.lock.*.tmp behind', async () => {
    const dir = projectOnFullDisk(64, 0);
    const run = await runCommand('pin-hosts', [], dir, fakeCluster(inventoryOf()));
    expect(run.code, run.stderr).toBe(1);
    expect(run.stderr).toMatch(/^error: \S*\.hardway\.lock: no space left on the device/);
    expect(readdirSync(dir).sort()).toEqual(['filler', 'machines.txt']);
  });
});

describe('a read-only file system (EROFS)', () => {
  it('certs and a remote command say so, naming the path (exit 1), and change nothing', async () => {
    const p = makeProject({ cluster: EC });
    const ro = readOnlyView(p.dir);
    mounts.push(ro);
    const certs = await runCli(['certs'], ro.dir);
    failedCleanly(certs, 1, /the file system is read-only \(EROFS/);
    expect(certs.stderr).toContain(ro.dir);
    const pin = await runCommand('pin-hosts', [], ro.dir, fakeCluster(inventoryOf()));
    expect(pin.code, pin.stderr).toBe(1);
    expect(pin.stderr).toMatch(/^error: \S*\.hardway\.lock: the file system is read-only/);
    expect(readdirSync(p.dir).sort()).toEqual(['cluster.yaml', 'machines.txt']);
  });
});

describe('a file where a directory belongs (EEXIST), a directory where a file belongs (EISDIR)', () => {
  it('logs as a file: exit 2 naming it, no machine asked', async () => {
    const dir = projectDir();
    writeFileSync(join(dir, 'logs'), 'not a directory\n');
    const fakes = fakeCluster(inventoryOf());
    const run = await runCommand('pin-hosts', [], dir, fakes);
    expect(run.code, run.stderr).toBe(2);
    expect(run.stderr).toMatch(new RegExp(`^error: ${join(dir, 'logs')} is a file, not a directory\\n  hint: `));
    for (const f of fakes.values()) expect(f.commands).toEqual([]);
  });

  it('a directory where render writes a file: exit 2 naming it, nothing written', async () => {
    const p = makeProject();
    mkdirSync(join(p.dir, 'out/server/etc/hosts.hardway-block'), { recursive: true });
    failedCleanly(await runCli(['render', '--out', 'out'], p.dir), 2, `${join(p.dir, 'out/server/etc/hosts.hardway-block')} is a directory, not a file`);
    expect(filesUnder(join(p.dir, 'out'))).toEqual([]);
  });

  it('a dangling link as the snapshot FILE: refused before etcd is asked (exit 2), the link left as it was', async () => {
    const dir = projectDir('10.240.0.10 server.kubernetes.local server\n');
    for (const f of ['downloads/client/etcdctl', 'pki/etcd-ca.crt', 'pki/etcd-client.crt', 'pki/etcd-client.key']) {
      mkdirSync(join(dir, f, '..'), { recursive: true });
      writeFileSync(join(dir, f), '');
    }
    chmodSync(join(dir, 'downloads/client/etcdctl'), 0o755);
    symlinkSync('/nonexistent/snapshot.db', join(dir, 'snap.db'));
    const asked: string[] = [];
    const db = Buffer.concat([Buffer.alloc(16384), createHash('sha256').update(Buffer.alloc(16384)).digest()]);
    const e = await saveSnapshot({
      inventory: loadInventory(join(dir, 'machines.txt')), file: join(dir, 'snap.db'), cwd: dir, out: process.stderr, now: new Date(),
      run: async (cmd) => {
        asked.push(cmd.text);
        const tmp = /snapshot save '?([^' ]+)'?$/.exec(cmd.text)?.[1];
        if (tmp) writeFileSync(tmp, db);
        return { code: 0, stdout: '{"hash":1,"revision":2,"totalKey":3,"totalSize":4}', stderr: '' };
      },
    }).catch((x: unknown) => x);
    expect(e).toMatchObject({ exitCode: 2, message: expect.stringContaining(`${join(dir, 'snap.db')} is a symbolic link (to /nonexistent/snapshot.db)`) });
    expect(asked).toEqual([]);
    expect(readdirSync(dir).filter((f) => f.startsWith('.snap.db'))).toEqual([]);
  });
});

describe('the lock as a link (item 8)', () => {
  it('a dangling .hardway.lock is named for what it is (exit 2), not "other runs are starting" forever', async () => {
    const p = makeProject({ cluster: EC });
    symlinkSync('/nonexistent/lock', join(p.dir, '.hardway.lock'));
    const run = await hardway(p, 'certs');
    failedCleanly(run, 2, `${join(p.dir, '.hardway.lock')} is a symbolic link (to /nonexistent/lock), not a lock hardway made`);
    expect(run.stderr).toContain(`remove it (rm ${join(p.dir, '.hardway.lock')})`);
    expect(existsSync(join(p.dir, 'pki'))).toBe(false);
    expect(readdirSync(p.dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });
});
