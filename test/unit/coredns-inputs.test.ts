// Where the CoreDNS build's pinned inputs come from (src/images/coredns-inputs.ts), with stand-in
// files and pins of their own: dns.source as a path or a URL (a server on 127.0.0.1), else the
// cache; the caddy .deb from the cache, beside the archive, or the mirror's sid pool. A file whose
// SHA-256 differs is refused naming both checksums, and nothing of it reaches the cache.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NO_PROGRESS } from '../../src/download/progress.ts';
import { FailureError, InputError, PreconditionError } from '../../src/errors.ts';
import { caddyDeb, corednsSourceArchive, type InputOptions } from '../../src/images/coredns-inputs.ts';

const work = mkdtempSync(join(tmpdir(), 'hardway-coredns-inputs-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
const sha = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');

const ARCHIVE = Buffer.from('a stand-in for coredns-1.8.3.tar.gz\n');
const CADDY = Buffer.from('a stand-in for the caddy .deb\n');
const archivePin = { name: 'coredns-1.8.3.tar.gz', sha256: sha(ARCHIVE) };
const caddyPin = { name: 'golang-github-coredns-caddy-dev_1.1.1-1_all.deb', sha256: sha(CADDY), pool: 'pool/main/g/golang-github-coredns-caddy/golang-github-coredns-caddy-dev_1.1.1-1_all.deb' };
const CLUSTER = 'versions:\n  kubernetes: v1.20.2\ndns:\n  enabled: true\n  source: SOURCE\n';

/** Files served on 127.0.0.1 by path (the mirror and dns.source URLs); what was asked for is recorded. */
const served = new Map<string, Buffer>();
const asked: string[] = [];
let server: Server;
let base = '';
beforeAll(async () => {
  server = createServer((req, res) => {
    asked.push(req.url!);
    const body = served.get(req.url!);
    res.writeHead(body ? 200 : 404).end(body ?? 'not found');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

/** A project with cluster.yaml naming `source` (a line of its own: line 5), and an empty cache of its own. */
function project(source?: string): InputOptions {
  const dir = mkdtempSync(join(work, 'p-'));
  const clusterFile = join(dir, 'cluster.yaml');
  writeFileSync(clusterFile, source === undefined ? 'versions:\n  kubernetes: v1.20.2\n' : CLUSTER.replace('SOURCE', source));
  const cache = join(dir, 'cache');
  return { projectDir: dir, source, clusterFile, clusterShown: 'cluster.yaml', cache, progress: NO_PROGRESS, mirror: `${base}/debian`, archivePin, caddyPin };
}

/** What the cache holds, temp files included. */
const cached = (o: InputOptions) => (existsSync(o.cache) ? readdirSync(o.cache) : []);

async function failure(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (e) {
    return e as Error;
  }
  throw new Error('expected a failure');
}

describe('the CoreDNS source archive', () => {
  it('dns.source a path relative to the project: verified, copied into the cache; then cached', async () => {
    const o = project('third_party/coredns-1.8.3.tar.gz');
    mkdirSync(join(o.projectDir, 'third_party'));
    writeFileSync(join(o.projectDir, 'third_party/coredns-1.8.3.tar.gz'), ARCHIVE);
    const first = await corednsSourceArchive(o);
    expect(first.said).toBe(`CoreDNS v1.8.3 source archive: copied into the cache from ${join(o.projectDir, 'third_party/coredns-1.8.3.tar.gz')}, sha256 verified`);
    expect(first.path).toBe(join(o.cache, archivePin.sha256));
    expect(readFileSync(first.path).equals(ARCHIVE)).toBe(true);
    expect(cached(o)).toEqual([archivePin.sha256]);
    const again = await corednsSourceArchive(o);
    expect(again).toEqual({ path: first.path, said: 'CoreDNS v1.8.3 source archive: cached, sha256 verified' });
    // dns.source unset afterwards: the cache alone serves.
    expect((await corednsSourceArchive({ ...o, source: undefined })).path).toBe(first.path);
  });

  it('a file whose SHA-256 differs: refused naming both checksums and cluster.yaml\'s line, nothing cached (exit 2)', async () => {
    const o = project('wrong.tar.gz');
    writeFileSync(join(o.projectDir, 'wrong.tar.gz'), 'not the archive');
    const e = await failure(corednsSourceArchive(o));
    expect(e).toBeInstanceOf(InputError);
    expect((e as InputError).exitCode).toBe(2);
    expect((e as InputError).where).toEqual({ file: 'cluster.yaml', line: 5 });
    expect(e.message).toContain(`${join(o.projectDir, 'wrong.tar.gz')} is not the CoreDNS v1.8.3 source archive, refused`);
    expect(e.message).toContain(`expected: sha256:${archivePin.sha256}`);
    expect(e.message).toContain(`actual:   sha256:${sha('not the archive')}`);
    expect((e as InputError).hint).toMatch(/^nothing was cached/);
    expect(cached(o)).toEqual([]);
  });

  it('a wrong file is refused even when the cache already holds the right archive', async () => {
    const o = project('wrong.tar.gz');
    mkdirSync(o.cache);
    writeFileSync(join(o.cache, archivePin.sha256), ARCHIVE);
    writeFileSync(join(o.projectDir, 'wrong.tar.gz'), 'not the archive');
    expect((await failure(corednsSourceArchive(o))).message).toContain('refused');
    expect(cached(o)).toEqual([archivePin.sha256]);
  });

  it('a dns.source that does not exist: an input error naming dns.source, its line and the path', async () => {
    const o = project('nowhere/coredns-1.8.3.tar.gz');
    const e = await failure(corednsSourceArchive(o));
    expect(e).toBeInstanceOf(InputError);
    expect(e.message).toBe(`dns.source: ${join(o.projectDir, 'nowhere/coredns-1.8.3.tar.gz')} does not exist`);
    expect((e as InputError).where).toEqual({ file: 'cluster.yaml', line: 5 });
    mkdirSync(join(o.projectDir, 'adir'));
    expect((await failure(corednsSourceArchive({ ...o, source: 'adir' }))).message).toBe(`dns.source: ${join(o.projectDir, 'adir')} is a directory, not a file`);
  });

  it('dns.source unset and nothing cached: a precondition error (exit 1) that says to set dns.source and where the archive comes from', async () => {
    const e = await failure(corednsSourceArchive(project()));
    expect(e).toBeInstanceOf(PreconditionError);
    expect((e as PreconditionError).exitCode).toBe(1);
    expect(e.message).toBe(`no CoreDNS v1.8.3 source archive: dns.source is not set in cluster.yaml and hardway's cache has none (sha256 ${archivePin.sha256})`);
    expect((e as PreconditionError).hint).toContain('set dns.source in cluster.yaml to the CoreDNS v1.8.3 source archive');
    expect((e as PreconditionError).hint).toContain('git archive --prefix=coredns-1.8.3/ v1.8.3 | gzip -n');
  });

  it('dns.source a URL: downloaded, verified and cached; other bytes there: refused naming both checksums, nothing cached', async () => {
    served.set('/good.tar.gz', ARCHIVE);
    served.set('/bad.tar.gz', Buffer.from('other bytes'));
    const o = project(`${base}/good.tar.gz`);
    expect((await corednsSourceArchive(o)).said).toBe(`CoreDNS v1.8.3 source archive: downloaded from ${base}/good.tar.gz, sha256 verified`);
    expect(cached(o)).toEqual([archivePin.sha256]);

    const bad = project(`${base}/bad.tar.gz`);
    const e = await failure(corednsSourceArchive(bad));
    expect(e).toBeInstanceOf(FailureError);
    expect(e.message).toContain(`expected: sha256:${archivePin.sha256}`);
    expect(e.message).toContain(`actual:   sha256:${sha('other bytes')}`);
    expect((e as FailureError).hint).toContain('refused and nothing was cached');
    expect(cached(bad)).toEqual([]);
  });
});

describe('the caddy .deb', () => {
  const pool = `/debian/${caddyPin.pool}`;

  it('beside the dns.source archive: verified and copied into the cache; then cached, without asking the mirror', async () => {
    const o = project('coredns-1.8.3.tar.gz');
    writeFileSync(join(o.projectDir, caddyPin.name), CADDY);
    asked.length = 0;
    expect((await caddyDeb(o)).said).toBe(`${caddyPin.name} (Debian sid, pinned): copied into the cache from ${join(o.projectDir, caddyPin.name)}, sha256 verified`);
    expect((await caddyDeb(o)).said).toBe(`${caddyPin.name} (Debian sid, pinned): cached, sha256 verified`);
    expect(asked).toEqual([]);
  });

  it('beside the archive but other bytes: refused naming both checksums, nothing cached', async () => {
    const o = project('coredns-1.8.3.tar.gz');
    writeFileSync(join(o.projectDir, caddyPin.name), 'not caddy');
    const e = await failure(caddyDeb(o));
    expect(e.message).toContain(`expected: sha256:${caddyPin.sha256}`);
    expect(e.message).toContain(`actual:   sha256:${sha('not caddy')}`);
    expect(cached(o)).toEqual([]);
  });

  it('nowhere else: fetched from the sid pool of the mirror and verified; gone from the pool: an error that says where to put it', async () => {
    served.set(pool, CADDY);
    const o = project(); // dns.source unset: nothing to look beside
    expect((await caddyDeb(o)).said).toBe(`${caddyPin.name} (Debian sid, pinned): downloaded from ${base}${pool}, sha256 verified`);
    expect(cached(o)).toEqual([caddyPin.sha256]);

    served.delete(pool);
    const e = await failure(caddyDeb(project()));
    expect(e.message).toContain('HTTP 404');
    expect((e as FailureError).hint).toContain(`put ${caddyPin.name} (sha256 ${caddyPin.sha256}) beside the archive dns.source names`);

    served.set(pool, Buffer.from('a newer caddy'));
    const other = project();
    expect((await failure(caddyDeb(other))).message).toContain(`actual:   sha256:${sha('a newer caddy')}`);
    expect(cached(other)).toEqual([]);
  });
});
