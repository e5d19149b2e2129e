// Issue 34, item 5: the dns.source download and copy (src/download/fetch.ts,
// src/images/coredns-inputs.ts) against loopback HTTP servers and real file systems: a drip is cut
// at the deadline, a body bigger than the pinned file can be is refused (by its announced size
// first), an interrupted download leaves no .partial-* file, a full cache disk is named as the
// cache's, and a local source is hashed as it streams (nothing is written when the cache already
// holds the archive).
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fetchVerified } from '../../src/download/fetch.ts';
import { removedOnExit } from '../../src/download/cache.ts';
import { NO_PROGRESS } from '../../src/download/progress.ts';
import { FailureError } from '../../src/errors.ts';
import { corednsSourceArchive, type InputOptions } from '../../src/images/coredns-inputs.ts';
import { fillUp, tmpfs } from './safety.helpers.ts';

const ROOT = join(import.meta.dirname, '../..');
const sha = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');
const ARCHIVE = Buffer.alloc(256 * 1024, 'a stand-in archive ');
const pin = { name: 'coredns-1.8.3.tar.gz', sha256: sha(ARCHIVE), maxBytes: 300 * 1024 };

let server: Server;
let base = '';
const routes: Record<string, (res: ServerResponse) => void> = {
  '/drip': (res) => {
    res.writeHead(200);
    const t = setInterval(() => res.write('x'), 20);
    res.on('close', () => clearInterval(t));
  },
  '/endless': (res) => {
    res.writeHead(200);
    const chunk = Buffer.alloc(64 * 1024, 'y');
    const more = () => {
      while (res.write(chunk));
    };
    res.on('drain', more);
    more();
  },
  '/announced-big': (res) => {
    res.writeHead(200, { 'content-length': String(100 * 1024 * 1024) });
    res.write('z');
  },
  '/archive': (res) => res.end(ARCHIVE),
};
beforeAll(async () => {
  server = createServer((req, res) => (routes[req.url!] ?? ((r: ServerResponse) => r.writeHead(404).end()))(res));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(() => {
  server.closeAllConnections();
  return new Promise<void>((r) => server.close(() => r()));
});

const entries = (dir: string) => readdirSync(dir);
const failure = (p: Promise<unknown>) => p.then(() => new Error('succeeded'), (e: unknown) => e as Error);

/** A project whose cluster.yaml names `source` on line 3, with a cache of its own (or `cache`). */
function project(source: string, cache?: string): InputOptions {
  const dir = mkdtempSync(join(tmpdir(), 'hw-dl-'));
  writeFileSync(join(dir, 'cluster.yaml'), `dns:\n  enabled: true\n  source: ${source}\n`);
  return { projectDir: dir, source, clusterFile: join(dir, 'cluster.yaml'), clusterShown: 'cluster.yaml', cache: cache ?? join(dir, 'cache'), progress: NO_PROGRESS, archivePin: pin };
}

describe('the dns.source download is bounded (item 5)', () => {
  it('a server that drips is given up at the deadline, and nothing is left in the cache', async () => {
    const cache = mkdtempSync(join(tmpdir(), 'hw-cache-'));
    const started = Date.now();
    const err = await failure(fetchVerified({ url: `${base}/drip`, algorithm: 'sha256', hex: pin.sha256, deadlineMs: 400 }, cache, NO_PROGRESS));
    expect(err).toBeInstanceOf(FailureError);
    expect(err.message).toMatch(/^download of drip failed: .*not complete within 0\.4 s/);
    expect(Date.now() - started).toBeLessThan(5000);
    expect(entries(cache)).toEqual([]);
  });

  it('an endless body is cut at the pinned file\'s size (dns.source as a URL), and nothing is cached', async () => {
    const o = project(`${base}/endless`);
    const err = await failure(corednsSourceArchive(o));
    expect(err.message).toMatch(/^download of endless failed: .*more than the 300 KiB this file can be/);
    expect(entries(o.cache)).toEqual([]);
  });

  it('an announced size above it is refused before the body is read', async () => {
    const o = project(`${base}/announced-big`);
    expect((await failure(corednsSourceArchive(o))).message).toMatch(/^download of announced-big failed: the server announces 100 MiB, more than the 300 KiB this file can be/);
  });

  it('the right file still downloads, verified', async () => {
    const o = project(`${base}/archive`);
    expect((await corednsSourceArchive(o)).path).toBe(join(o.cache, pin.sha256));
  });

  it('a local dns.source bigger than the archive can be is refused by its size, with file and line', async () => {
    const o = project('big.tar.gz');
    writeFileSync(join(o.projectDir, 'big.tar.gz'), Buffer.alloc(400 * 1024));
    const err = await failure(corednsSourceArchive(o));
    expect(`${(err as { where?: { line?: number } }).where?.line}: ${err.message}`).toBe(`3: dns.source: ${join(o.projectDir, 'big.tar.gz')} is 400 KiB, more than the 300 KiB hardway reads of such a file`);
  });

  it('a download interrupted by SIGTERM exits 143 and leaves no .partial-* file in the cache', async () => {
    const cache = mkdtempSync(join(tmpdir(), 'hw-cache-'));
    const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'test/fixtures/download-holder.ts'), `${base}/drip`, cache], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    const exited = new Promise<number | null>((r) => child.on('close', (c) => r(c)));
    const until = async (ok: () => boolean) => {
      for (let i = 0; i < 300 && !ok(); i++) await new Promise((r) => setTimeout(r, 50));
    };
    await until(() => out.includes('started') && entries(cache).some((n) => n.startsWith('.partial-')));
    expect(entries(cache).filter((n) => n.startsWith('.partial-'))).toHaveLength(1);
    child.kill('SIGTERM');
    expect(await exited).toBe(143);
    expect(entries(cache)).toEqual([]);
  }, 30_000);
});

describe('temp files removed at exit', () => {
  it('twenty downloads at once add at most one exit listener to the process (no MaxListenersExceededWarning)', () => {
    const before = process.listenerCount('exit');
    const done = Array.from({ length: 20 }, (_, i) => removedOnExit(join(tmpdir(), `hw-never-${i}`)));
    expect(process.listenerCount('exit') - before).toBeLessThanOrEqual(1);
    done.forEach((d) => d());
  });
});

describe('a full cache disk is the cache\'s, and the local source is hashed as it streams (item 5)', () => {
  it('dns.source copied into a full cache: the error names the cache and its disk, not the source', async () => {
    const disk = tmpfs(512);
    try {
      const cache = join(disk.dir, 'downloads');
      mkdirSync(cache);
      fillUp(disk.dir, 8);
      const o = project('coredns.tar.gz', cache);
      writeFileSync(join(o.projectDir, 'coredns.tar.gz'), ARCHIVE);
      const err = await failure(corednsSourceArchive(o));
      expect(err).toBeInstanceOf(FailureError);
      expect(err.message).toBe(`${cache} (hardway's download cache): no space left on the device (ENOSPC on write)`);
      expect((err as FailureError).hint).toMatch(/^free some space on that file system/);
      expect(entries(cache)).toEqual([]);
    } finally {
      disk.unmount();
    }
  });

  it('a download into a full cache names the cache too', async () => {
    const disk = tmpfs(512);
    try {
      const cache = join(disk.dir, 'downloads');
      mkdirSync(cache);
      fillUp(disk.dir, 8);
      const err = await failure(corednsSourceArchive(project(`${base}/archive`, cache)));
      expect(err.message).toBe(`${cache} (hardway's download cache): no space left on the device (ENOSPC on write)`);
      expect(entries(cache)).toEqual([]);
    } finally {
      disk.unmount();
    }
  });

  it('with the archive already cached, the named file is checked without writing a byte (a full cache disk does not matter)', async () => {
    const disk = tmpfs(1024);
    try {
      const cache = join(disk.dir, 'downloads');
      mkdirSync(cache);
      writeFileSync(join(cache, pin.sha256), ARCHIVE);
      fillUp(disk.dir, 0);
      const o = project('coredns.tar.gz', cache);
      writeFileSync(join(o.projectDir, 'coredns.tar.gz'), ARCHIVE);
      expect((await corednsSourceArchive(o)).said).toBe('CoreDNS v1.8.3 source archive: cached, sha256 verified');
    } finally {
      disk.unmount();
    }
  });
});
