// Uploads over SFTP against an in-process ssh2.Server whose sftp subsystem is OpenSSH's
// sftp-server: atomic temp+rename, mode/owner, parent dirs, streaming from disk, crash leftovers.
// Every path is inside a mkdtemp directory.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createWriteStream, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CommandError } from '../../src/errors.ts';
import { openTransport, type SshTransport, type TransportOptions } from '../../src/transport/index.ts';
import { KEYS, knownHostsLine, startTestServer, testMachine, type TestServer, type TestServerOptions } from '../fixtures/ssh/test-server.ts';

const MB = 1024 * 1024;
let dir: string;
let root: string;
let server: TestServer;
let transport: SshTransport | undefined;

async function start(opts: Partial<TestServerOptions> = {}, extra: Partial<TransportOptions> = {}): Promise<SshTransport> {
  server = await startTestServer({ sandbox: root, ...opts });
  writeFileSync(join(dir, 'known_hosts'), knownHostsLine(server.port));
  const ssh = { user: 'root', port: server.port, knownHosts: 'known_hosts', identityFile: join(KEYS, 'client_ed25519') };
  transport = await openTransport(testMachine(), ssh, { dir, home: dir, env: {}, retry: { sleep: async () => undefined }, ...extra });
  return transport;
}

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'hardway-upload-'));
  root = join(dir, 'remote');
  mkdirSync(root);
});
afterEach(async () => {
  await transport?.close();
  transport = undefined;
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const leftovers = (d: string) => readdirSync(d).filter((n) => n.includes('.hardway-tmp-'));

describe('upload', () => {
  it('creates parent directories and writes the file with its mode and owner root:root', async () => {
    const t = await start();
    const target = join(root, 'etc/deep/new/dir/config.yaml');
    await t.upload(target, { data: Buffer.from('a: 1\n') }, { mode: 0o640 });
    expect(readFileSync(target, 'utf8')).toBe('a: 1\n');
    const st = statSync(target);
    expect(st.mode & 0o7777).toBe(0o640);
    expect([st.uid, st.gid]).toEqual([0, 0]);
    expect(leftovers(join(root, 'etc/deep/new/dir'))).toEqual([]);
  });

  it('replaces an existing file by posix-rename of a temp file beside it', async () => {
    const t = await start();
    const target = join(root, 'hosts');
    writeFileSync(target, 'old\n', { mode: 0o600 });
    const inodeBefore = statSync(target).ino;
    await t.upload(target, { data: Buffer.from('new\n') }, { mode: 0o644 });
    expect(readFileSync(target, 'utf8')).toBe('new\n');
    expect(statSync(target).mode & 0o7777).toBe(0o644);
    // A rename puts a new inode in place: the old file was never opened for writing.
    expect(statSync(target).ino).not.toBe(inodeBefore);
    expect(server.stats.commands.some((c) => c.includes("'mv "))).toBe(false);
  });

  it('falls back to mv -f when the SFTP server has no posix-rename extension', async () => {
    const t = await start({ sftpExtensions: false });
    const target = join(root, 'hosts');
    writeFileSync(target, 'old\n');
    await t.upload(target, { data: Buffer.from('new\n') }, { mode: 0o600 });
    expect(readFileSync(target, 'utf8')).toBe('new\n');
    expect(statSync(target).mode & 0o7777).toBe(0o600);
    expect(server.stats.commands.filter((c) => c.includes("'mv -f -- "))).toHaveLength(1);
    expect(leftovers(root)).toEqual([]);
  });

  it('sets the named owner, and an unknown owner is an error naming the machine, before any byte is sent', async () => {
    const t = await start();
    const target = join(root, 'owned');
    await t.upload(target, { data: Buffer.from('x') }, { mode: 0o600, owner: 'nobody:nogroup' });
    const nobody = Number(execFileSync('id', ['-u', 'nobody'], { encoding: 'utf8' }));
    expect(statSync(target).uid).toBe(nobody);
    const err = await t.upload(join(root, 'other'), { data: Buffer.from('x') }, { mode: 0o600, owner: 'no-such-user:root' }).catch((e) => e);
    expect(err).toBeInstanceOf(CommandError);
    expect(err.message).toMatch(/^node-0: command failed .*id -u -- no-such-user/);
    expect(existsSync(join(root, 'other'))).toBe(false);
    expect(server.stats.sftpWrites).toBe(1);
  });

  it('streams a 50 MB file from disk in many bounded SFTP writes, byte for byte', async () => {
    const t = await start();
    const src = join(dir, 'big.bin');
    const block = Buffer.alloc(MB);
    const hash = createHash('sha256');
    const out = createWriteStream(src);
    for (let i = 0; i < 50; i++) {
      block.fill(i);
      block.write(`block ${i}`);
      hash.update(block);
      if (!out.write(block)) await new Promise<void>((r) => out.once('drain', () => r()));
    }
    await new Promise<void>((r) => out.end(() => r()));
    let biggest = 0;
    server.onSftpWrite = (n) => (biggest = Math.max(biggest, n));
    await t.upload(join(root, 'bin/big.bin'), { file: src }, { mode: 0o755 });
    expect(sha(readFileSync(join(root, 'bin/big.bin')))).toBe(hash.digest('hex'));
    expect(server.stats.sftpWriteBytes).toBe(50 * MB);
    expect(server.stats.sftpWrites).toBeGreaterThanOrEqual(50 * MB / (64 * 1024));
    expect(biggest).toBeLessThanOrEqual(64 * 1024);
  });

  it('sends bytes before the source is fully read: a FIFO whose second half is written only after the server got data', async () => {
    const t = await start();
    const fifo = join(dir, 'source.fifo');
    execFileSync('mkfifo', [fifo]);
    const firstWrite = new Promise<void>((resolve) => (server.onSftpWrite = () => resolve()));
    const writer = (async () => {
      const out = createWriteStream(fifo);
      const half = Buffer.alloc(25 * MB, 'a');
      if (!out.write(half)) await new Promise<void>((r) => out.once('drain', () => r()));
      // A client that read the whole source before sending would never get here: the writer waits.
      const sent = await Promise.race([firstWrite.then(() => true), new Promise((r) => setTimeout(() => r(false), 20_000))]);
      if (!sent) {
        out.destroy();
        throw new Error('no SFTP WRITE reached the server while the source was still open: the upload is not streaming');
      }
      out.end(Buffer.alloc(25 * MB, 'b'));
      await new Promise<void>((r) => out.once('finish', () => r()));
    })();
    await Promise.all([t.upload(join(root, 'streamed.bin'), { file: fifo }, { mode: 0o644 }), writer]);
    const got = readFileSync(join(root, 'streamed.bin'));
    expect(got.length).toBe(50 * MB);
    expect(got[25 * MB - 1]).toBe('a'.charCodeAt(0));
    expect(got[25 * MB]).toBe('b'.charCodeAt(0));
  });

  it('never shows a reader half a file: every read during a big upload sees the old or the new content', async () => {
    const t = await start();
    const target = join(root, 'watched.bin');
    const oldData = Buffer.alloc(4 * MB, 'o');
    const newData = Buffer.alloc(24 * MB, 'n');
    writeFileSync(target, oldData);
    const seen = new Set<string>();
    let reading = true;
    const reader = (async () => {
      while (reading) {
        seen.add(sha(readFileSync(target)));
        await new Promise((r) => setImmediate(r));
      }
    })();
    await t.upload(target, { data: newData }, { mode: 0o644 });
    reading = false;
    await reader;
    seen.add(sha(readFileSync(target)));
    expect([...seen].every((h) => h === sha(oldData) || h === sha(newData))).toBe(true);
    expect(seen.has(sha(newData))).toBe(true);
  });

  it('a connection cut mid-upload leaves the target untouched; the next upload removes the stale temp file', async () => {
    const t = await start();
    const target = join(root, 'kube-proxy');
    writeFileSync(target, 'old binary');
    let writes = 0;
    server.onSftpWrite = () => {
      if (++writes === 20) server.dropConnections();
    };
    const err = await t.upload(target, { data: Buffer.alloc(8 * MB, 'x') }, { mode: 0o755 }).catch((e) => e);
    expect(err.name).toBe('ConnectionLostError');
    expect(err.message).toMatch(/^node-0: connection lost during upload of .*kube-proxy/);
    expect(readFileSync(target, 'utf8')).toBe('old binary');
    // As after a SIGKILL of hardway, a temp file may be left; plant one to be sure the next upload cleans it.
    writeFileSync(join(root, '.kube-proxy.hardway-tmp-deadbeef0000'), 'partial');
    server.onSftpWrite = undefined;
    await t.upload(target, { data: Buffer.from('new binary') }, { mode: 0o755 });
    expect(readFileSync(target, 'utf8')).toBe('new binary');
    expect(leftovers(root)).toEqual([]);
  });

  it('uploads on one connection share one SFTP session and prepare each directory and owner once', async () => {
    const t = await start();
    const files = ['a', 'b', 'c', 'd', 'e'].map((n) => join(root, 'etc', n));
    await Promise.all(files.map((f) => t.upload(f, { data: Buffer.from(f) }, { mode: 0o644 })));
    await t.upload(join(root, 'bin', 'x'), { data: Buffer.from('x') }, { mode: 0o755 });
    for (const f of files) expect(readFileSync(f, 'utf8')).toBe(f);
    expect(server.stats.sftpSessions).toBe(1);
    // mkdir + stale temp removal for etc/ and for bin/, and root's ids once.
    const prepares = server.stats.commands.filter((c) => c.includes('mkdir -p'));
    expect(prepares).toHaveLength(2);
    expect(server.stats.commands.filter((c) => c.includes('id -u'))).toHaveLength(1);
  });

  it('an SFTP session that ends under an upload fails that upload, and the next upload opens a new session on the same connection', async () => {
    const t = await start();
    await t.upload(join(root, 'first'), { data: Buffer.from('1') }, { mode: 0o644 });
    const target = join(root, 'kubelet');
    let writes = 0;
    server.onSftpWrite = () => {
      if (++writes === 5) server.endSftpSessions();
    };
    const err = await t.upload(target, { data: Buffer.alloc(4 * MB, 'x') }, { mode: 0o755 }).catch((e) => e);
    expect(err.name).toBe('ConnectionLostError');
    expect(err.message).toMatch(/kubelet/);
    expect(existsSync(target)).toBe(false);
    server.onSftpWrite = undefined;
    await t.upload(target, { data: Buffer.from('kubelet') }, { mode: 0o755 });
    expect(readFileSync(target, 'utf8')).toBe('kubelet');
    expect(server.stats.sftpSessions).toBe(2);
    expect(server.stats.connections).toBe(1);
  });

  it('rejects a relative or unnormalized target path', async () => {
    const t = await start();
    await expect(t.upload('etc/hosts', { data: Buffer.from('') }, { mode: 0o644 })).rejects.toThrow(/absolute file path/);
    await expect(t.upload(`${root}/a/../b`, { data: Buffer.from('') }, { mode: 0o644 })).rejects.toThrow(/absolute file path/);
  });
});
