// `hardway download --source release` against a local HTTP server on 127.0.0.1 serving fake
// release files laid out like the real ones (the real release hosts are not reachable here).
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';
import { BINARY_DIRS, readDownloads, requireBinaries, type DownloadsManifest } from '../../src/download/layout.ts';
import { FailureError } from '../../src/errors.ts';
import { buildFakeReleases, fakeBinary, startReleaseServer, type ReleaseServer } from '../fixtures/download/release-server.ts';

const work = mkdtempSync(join(tmpdir(), 'hardway-download-'));
let fake: ReturnType<typeof buildFakeReleases>;
let server: ReleaseServer;
let project: string;
let cache: string;

beforeAll(() => {
  fake = buildFakeReleases(join(work, 'fake'));
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

beforeEach(async () => {
  server = await startReleaseServer(fake.files);
  project = mkdtempSync(join(work, 'project-'));
  cache = mkdtempSync(join(work, 'cache-'));
});
afterEach(async () => {
  await server.close();
});

async function download(args: string[] = ['--arch', 'amd64'], extraEnv: Record<string, string> = {}) {
  const env = { HOME: work, XDG_CACHE_HOME: cache, HARDWAY_VERSIONS_FILE: fake.versionsFile, HARDWAY_DOWNLOAD_BASE_URL: server.baseUrl, ...extraEnv };
  const r = await runCli(['download', ...args], project, env);
  return { code: r.code, out: r.stdout, err: r.stderr };
}

const sha256 = (p: string) => createHash('sha256').update(readFileSync(p)).digest('hex');
const cacheFiles = () => readdirSync(join(cache, 'hardway', 'downloads'));
const urlPath = (name: string) => [...fake.files.keys()].find((k) => k.endsWith(name))!;
const EXPECTED = [...Object.entries(BINARY_DIRS).map(([n, d]) => `${d}/${n}`), 'cni-plugins/bridge', 'cni-plugins/host-local', 'cni-plugins/loopback', 'cni-plugins/portmap'].sort();

describe('hardway download --source release', () => {
  it('lays every binary out in downloads/{client,controller,worker,cni-plugins} with mode 0755 and a manifest', async () => {
    const r = await download();
    expect(r.code).toBe(0);
    // Not a terminal: one plain progress line per download on stderr, no bar, no error.
    expect(r.err).toContain('  downloading kubernetes-server-linux-amd64.tar.gz (');
    expect(r.err).not.toContain('\r');
    expect(r.err).not.toContain('error');
    const m = readDownloads(project) as DownloadsManifest;
    expect(m.source).toBe('release');
    expect(m.arch).toBe('amd64');
    expect(m.missing).toEqual([]);
    expect(m.files.map((f) => f.path)).toEqual(EXPECTED);
    for (const f of m.files) {
      const p = join(project, 'downloads', f.path);
      expect(statSync(p).mode & 0o777, f.path).toBe(0o755);
      expect(sha256(p), f.path).toBe(f.sha256);
      expect(f.source.kind).toBe('release');
    }
    // The right member of the right archive, for the right architecture, ends up in each place.
    expect(readFileSync(join(project, 'downloads/controller/kube-apiserver'), 'utf8')).toBe(fakeBinary('kube-apiserver amd64'));
    expect(readFileSync(join(project, 'downloads/client/etcdctl'), 'utf8')).toBe(fakeBinary('etcdctl amd64'));
    expect(readFileSync(join(project, 'downloads/worker/runc'), 'utf8')).toBe(fakeBinary('runc amd64'));
    expect(execFileSync(join(project, 'downloads/worker/containerd-shim-runc-v2'), { encoding: 'utf8' })).toContain('fake containerd-shim-runc-v2 amd64');
    expect(existsSync(join(project, 'downloads/cni-plugins/README.md'))).toBe(false);
    const apiserver = m.files.find((f) => f.path === 'controller/kube-apiserver')!;
    expect(apiserver).toMatchObject({ component: 'kubernetes', version: 'v1.32.3' });
    expect(apiserver.source).toMatchObject({ kind: 'release', url: `${server.baseUrl}/dl.k8s.io/v1.32.3/kubernetes-server-linux-amd64.tar.gz` });
    expect((apiserver.source as { digest: string }).digest).toMatch(/^sha512:[0-9a-f]{128}$/);
    expect((apiserver.source as { checksumSource: string }).checksumSource).toContain('kubernetes/kubernetes@');
    // The cache holds each release file under its digest, and nothing half-written.
    expect(cacheFiles().filter((n) => n.startsWith('.'))).toEqual([]);
    const amd64 = [...fake.files.entries()].filter(([k]) => k.includes('amd64'));
    const digests = amd64.map(([k, body]) => createHash(k.includes('kubernetes-server') ? 'sha512' : 'sha256').update(body).digest('hex'));
    expect(cacheFiles().sort()).toEqual(digests.sort());
  });

  it('a rerun with the server stopped changes nothing; after rm -r downloads/ it installs from the cache', async () => {
    expect((await download()).code).toBe(0);
    await server.close();
    const before = readFileSync(join(project, 'downloads/manifest.json'), 'utf8');
    const again = await download();
    expect(again.code).toBe(0);
    expect(again.out).toContain('0 installed, 17 unchanged');
    expect(again.out).not.toContain('downloaded');
    expect(readFileSync(join(project, 'downloads/manifest.json'), 'utf8')).toBe(before);
    rmSync(join(project, 'downloads'), { recursive: true });
    const fromCache = await download();
    expect(fromCache.code).toBe(0);
    expect(fromCache.out).toContain('17 installed');
    expect(readFileSync(join(project, 'downloads/manifest.json'), 'utf8')).toBe(before);
  });

  it('takes the arm64 files with --arch arm64', async () => {
    expect((await download(['--arch', 'arm64'])).code).toBe(0);
    expect(readFileSync(join(project, 'downloads/controller/etcd'), 'utf8')).toBe(fakeBinary('etcd arm64'));
    expect(readDownloads(project)!.arch).toBe('arm64');
    expect(server.requests.every((p) => !p.includes('amd64'))).toBe(true);
  });

  it("defaults to this machine's architecture", async () => {
    const native = execFileSync('dpkg', ['--print-architecture'], { encoding: 'utf8' }).trim();
    expect((await download([])).code).toBe(0);
    expect(readDownloads(project)!.arch).toBe(native);
  });

  it('a checksum mismatch names the file, URL, expected and actual sums, and leaves nothing in downloads/ or the cache', async () => {
    const path = urlPath('/amd64/kubectl');
    server.behaviour.set(path, 'corrupt');
    const r = await download();
    expect(r.code).toBe(1);
    const expected = createHash('sha256').update(fake.files.get(path)!).digest('hex');
    const bad = Buffer.from(fake.files.get(path)!);
    bad[bad.length - 1] ^= 0xff;
    const actual = createHash('sha256').update(bad).digest('hex');
    expect(r.err).toContain('checksum mismatch for kubectl');
    expect(r.err).toContain(`${server.baseUrl}${path}`);
    expect(r.err).toContain(`expected: sha256:${expected}`);
    expect(r.err).toContain(`actual:   sha256:${actual}`);
    expect(r.err).not.toMatch(/\n\s+at /); // no stack trace
    expect(existsSync(join(project, 'downloads'))).toBe(false);
    expect(cacheFiles()).toEqual([]);
  });

  it('a download cut half-way leaves nothing behind, and a rerun succeeds', async () => {
    const path = urlPath('/amd64/kubelet');
    server.behaviour.set(path, 'cut');
    const r = await download();
    expect(r.code).toBe(1);
    expect(r.err).toContain('download of kubelet failed');
    expect(r.err).toContain(`${server.baseUrl}${path}`);
    expect(existsSync(join(project, 'downloads'))).toBe(false);
    const kubeletDigest = createHash('sha256').update(fake.files.get(path)!).digest('hex');
    expect(cacheFiles().filter((n) => n.startsWith('.') || n === kubeletDigest)).toEqual([]);
    server.behaviour.delete(path);
    const again = await download();
    expect(again.code).toBe(0);
    expect(readFileSync(join(project, 'downloads/worker/kubelet'), 'utf8')).toBe(fakeBinary('kubelet amd64'));
  });

  it('an unknown pinned version is an input error naming the component, the version and the known ones', async () => {
    writeFileSync(join(project, 'cluster.yaml'), 'versions:\n  etcd: v3.5.99\n');
    const r = await download();
    expect(r.code).toBe(2);
    expect(r.err).toContain('no published checksums known for etcd v3.5.99');
    expect(r.err).toContain('v3.5.21');
    expect(server.requests).toEqual([]);
  });

  it('a version the manifest lacks, given its digest under checksums: in cluster.yaml: fetched from the URL of that version and verified', async () => {
    const known = urlPath('runc.amd64');
    const path = known.replace(/v\d+\.\d+\.\d+/, 'v9.9.9');
    const body = Buffer.from(fakeBinary('runc 9.9.9 amd64'));
    fake.files.set(path, body);
    try {
      const url = `https:/${path}`;
      const digest = createHash('sha256').update(body).digest('hex');
      writeFileSync(join(project, 'cluster.yaml'), `versions:\n  runc: v9.9.9\nchecksums:\n  "${url}": sha256:${digest}\n`);
      const r = await download();
      expect(r.code, r.err).toBe(0);
      expect(readFileSync(join(project, 'downloads/worker/runc'))).toEqual(body);
      const runc = readDownloads(project)!.files.find((f) => f.path === 'worker/runc')!;
      expect(runc).toMatchObject({ component: 'runc', version: 'v9.9.9', source: { kind: 'release', digest: `sha256:${digest}`, checksumSource: 'checksums in cluster.yaml' } });
      // The wrong digest is a checksum mismatch, as for any release file; arm64 has none given.
      writeFileSync(join(project, 'cluster.yaml'), `versions:\n  runc: v9.9.9\nchecksums:\n  "${url}": sha256:${'0'.repeat(64)}\n`);
      const wrong = await download();
      expect(wrong.code).toBe(1);
      expect(wrong.err).toContain('checksum mismatch for runc.amd64');
      const arm = await download(['--arch', 'arm64']);
      expect(arm.code).toBe(2);
      expect(arm.err).toContain(`runc v9.9.9: no checksum in cluster.yaml for ${url.replace('amd64', 'arm64')}`);
    } finally {
      fake.files.delete(path);
    }
  });

  it('rejects an unknown --source or --arch with exit 2', async () => {
    expect((await download(['--source', 'ftp'])).code).toBe(2);
    const arch = await download(['--arch', 'riscv64']);
    expect(arch.code).toBe(2);
    expect(arch.err).toContain('--arch riscv64 is not supported');
  });

  it('a broken versions manifest is an input error naming the file', async () => {
    const bad = join(work, 'bad-versions.json');
    writeFileSync(bad, JSON.stringify({ checksumSources: {}, components: { etcd: { 'v1.0.0': [{ id: 'etcd', type: 'binary', checksumSource: 'x', arch: {}, files: [] }] } } }));
    const r = await download(['--arch', 'amd64'], { HARDWAY_VERSIONS_FILE: bad });
    expect(r.code).toBe(2);
    expect(r.err).toContain(bad);
    expect(r.err).toContain('checksumSource "x" is not in checksumSources');
  });
});

describe('requireBinaries', () => {
  it('passes when the binaries are there and names the missing ones and `hardway download` otherwise', async () => {
    expect(() => requireBinaries(project, ['etcd'])).toThrow(FailureError);
    expect((await download()).code).toBe(0);
    expect(() => requireBinaries(project, ['etcd', 'kube-apiserver', 'cni-plugins/bridge'])).not.toThrow();
    rmSync(join(project, 'downloads/controller/etcd'));
    rmSync(join(project, 'downloads/worker/kubelet'));
    let err: unknown;
    try {
      requireBinaries(project, ['etcd', 'kube-apiserver', 'kubelet']);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(FailureError);
    const e = err as FailureError;
    expect(e.message).toContain('controller/etcd');
    expect(e.message).toContain('worker/kubelet');
    expect(e.message).not.toContain('kube-apiserver');
    expect(e.hint).toContain('hardway download');
  });
});
