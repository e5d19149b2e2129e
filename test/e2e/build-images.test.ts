// `hardway build-images` for real: busybox-static fetched from Debian with apt-get download (the
// network the first time, then the user cache), the same bytes on every build, and umoci's
// independent check of each image. CoreDNS built offline from the archive in ../shared/third_party
// (dns.source), Debian's kubernetes source package and a few Debian packages, then run here and
// asked real DNS questions on 127.0.0.1. In the e2e project because it needs the network and
// minutes the first time; the pure format tests are test/unit/images-build.test.ts and
// test/unit/coredns-recipe.test.ts.
import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createSocket } from 'node:dgram';
import { promises as dns } from 'node:dns';
import { existsSync, lstatSync, mkdtempSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';
import { cacheDir } from '../../src/download/cache.ts';
import { WEB_PAGE } from '../../src/images/build.ts';
import { layoutHelpers } from '../helpers/oci-layout.ts';

const REPO_ROOT = resolve(import.meta.dirname, '../..');

const work = mkdtempSync(join(tmpdir(), 'hardway-images-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const { untar, walkLayout } = layoutHelpers(work);

describe('hardway build-images (busybox-static from Debian, for real)', () => {
  const native = execFileSync('dpkg', ['--print-architecture'], { encoding: 'utf8' }).trim();
  const projects = [mkdtempSync(join(work, 'p1-')), mkdtempSync(join(work, 'p2-'))];
  for (const p of projects) writeFileSync(join(p, 'machines.txt'), '10.240.0.20 node-0.kubernetes.local node-0 10.200.0.0/24\n');
  const bytes = (p: string, f: string) => readFileSync(join(p, 'images', f));

  it('writes images/pause.tar and images/web.tar beside machines.txt; a rerun says unchanged and keeps every byte', async () => {
    const first = await runCli(['build-images'], projects[0]!);
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(/busybox-static \S+ \(\w+\): (downloaded|cached), sha256 verified/);
    expect(first.stdout).toContain('images: 2 written, 0 unchanged');
    // No cluster.yaml: Kubernetes v1.32.3, whose upstream CoreDNS image containerd pulls.
    expect(first.stdout).toContain(
      "  coredns: not built: Kubernetes v1.32.3 (hardway's default versions.kubernetes; there is no cluster.yaml) runs the upstream registry.k8s.io/coredns/coredns:v1.11.3, which containerd pulls\n",
    );
    const before = ['pause.tar', 'web.tar'].map((f) => bytes(projects[0]!, f));
    const mtime = lstatSync(join(projects[0]!, 'images', 'pause.tar')).mtimeMs;

    const again = await runCli(['build-images'], projects[0]!);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('images: 0 written, 2 unchanged');
    expect(again.stdout).toContain('busybox-static');
    expect(again.stdout).not.toContain('downloaded');
    expect(['pause.tar', 'web.tar'].map((f) => bytes(projects[0]!, f))).toEqual(before);
    expect(lstatSync(join(projects[0]!, 'images', 'pause.tar')).mtimeMs).toBe(mtime);

    // A second, separate build gives the same bytes.
    const other = await runCli(['build-images', '--machines', join(projects[1]!, 'machines.txt')], work);
    expect(other.code).toBe(0);
    for (const f of ['pause.tar', 'web.tar']) expect(sha(bytes(projects[1]!, f))).toBe(sha(bytes(projects[0]!, f)));

    // The real busybox is in the layer, for the machines' architecture.
    const p = walkLayout(untar(before[0]!));
    expect(p.config.architecture).toBe(native);
    const rootfs = untar(p.layer);
    expect(readFileSync(join(rootfs, 'bin/busybox')).subarray(0, 4).toString('latin1')).toBe('\x7fELF');
  }, 180_000);

  it('passes umoci: every blob verified, and a runtime bundle unpacked with the right process and files', async () => {
    for (const [file, tag, args] of [['pause.tar', '1', ['/bin/sleep', '2147483647']], ['web.tar', '1', ['/bin/httpd', '-f', '-p', '80', '-h', '/www']]] as const) {
      const layout = untar(bytes(projects[0]!, file));
      const bundle = join(mkdtempSync(join(work, 'bundle-')), 'b');
      execFileSync('umoci', ['unpack', '--image', `${layout}:${tag}`, bundle], { stdio: 'pipe' });
      const spec = JSON.parse(readFileSync(join(bundle, 'config.json'), 'utf8'));
      expect(spec.process.args).toEqual(args);
      expect(lstatSync(join(bundle, 'rootfs/bin/busybox')).isFile()).toBe(true);
      expect(readlinkSync(join(bundle, 'rootfs/bin/sh'))).toBe('busybox');
      if (file === 'web.tar') expect(readFileSync(join(bundle, 'rootfs/www/index.html'), 'utf8')).toBe(WEB_PAGE);
      // The busybox in the image runs here (same architecture): the sandbox image's command exists.
      if (execFileSync('dpkg', ['--print-architecture'], { encoding: 'utf8' }).trim() === JSON.parse(readFileSync(join(layout, 'index.json'), 'utf8')).manifests[0].platform.architecture) {
        expect(execFileSync(join(bundle, 'rootfs/bin/busybox'), ['echo', 'ok'], { encoding: 'utf8' })).toBe('ok\n');
      }
    }
  }, 120_000);
});

/** The CoreDNS v1.8.3 source archive the tests and the demo point dns.source at (the product never looks there). */
const COREDNS_ARCHIVE = join(REPO_ROOT, '../shared/third_party/coredns-1.8.3.tar.gz');

describe("hardway build-images with hardway's CoreDNS (built offline from source, for real)", () => {
  const native = execFileSync('dpkg', ['--print-architecture'], { encoding: 'utf8' }).trim();
  const project = mkdtempSync(join(work, 'dns-'));
  writeFileSync(join(project, 'machines.txt'), '10.240.0.10 server.kubernetes.local server\n10.240.0.20 node-0.kubernetes.local node-0 10.200.0.0/24\n');
  writeFileSync(join(project, 'cluster.yaml'), `versions:\n  kubernetes: v1.20.2\ndns:\n  source: ${COREDNS_ARCHIVE}\n`);
  const tars = ['pause.tar', 'web.tar', 'coredns.tar'];
  const bytes = (f: string) => readFileSync(join(project, 'images', f));

  it('writes images/coredns.tar beside pause and web from the dns.source archive; a rerun takes the binary from the cache and keeps every byte', async () => {
    expect(existsSync(COREDNS_ARCHIVE), `the CoreDNS source archive is missing: ${COREDNS_ARCHIVE} (see ../shared/third_party/README.md); this test needs it`).toBe(true);
    const first = await runCli(['build-images'], project);
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    expect(first.stdout).toContain(`hardway build-images: localhost/hardway/pause:1, localhost/hardway/web:1 and localhost/hardway/coredns:1.8.3 for ${native} into images\n`);
    expect(first.stdout).toMatch(new RegExp(`CoreDNS v1\\.8\\.3 source archive: (copied into the cache from ${COREDNS_ARCHIVE.replaceAll('.', '\\.')}|cached), sha256 verified`));
    // Built now (progress, then the binary's own word) or by an earlier run with the same inputs.
    expect(first.stdout).toMatch(new RegExp(`coredns v1\\.8\\.3 \\(${native}\\): (building from source[^]*\\[\\d+ s\\] GOPATH laid out[^]*built coredns v1\\.8\\.3 in \\d+ s: [\\d.]+ MB, CoreDNS-1\\.8\\.3|built before from the same inputs \\(cached\\))`));
    expect(first.stdout).toContain('images: 3 written, 0 unchanged');
    const before = tars.map((f) => sha(bytes(f)));
    const mtime = lstatSync(join(project, 'images', 'coredns.tar')).mtimeMs;

    const t = Date.now();
    const again = await runCli(['build-images'], project);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain(`coredns v1.8.3 (${native}): built before from the same inputs (cached)`);
    expect(again.stdout).toContain('CoreDNS v1.8.3 source archive: cached, sha256 verified');
    expect(again.stdout).not.toContain('building from source');
    expect(again.stdout).toContain('images: 0 written, 3 unchanged');
    expect(Date.now() - t).toBeLessThan(60_000);
    expect(tars.map((f) => sha(bytes(f)))).toEqual(before); // digests: toEqual on 30 MB Buffers walks every byte as a key
    expect(lstatSync(join(project, 'images', 'coredns.tar')).mtimeMs).toBe(mtime);
  }, 1_800_000);

  it('passes umoci; its /coredns is the cached build, static and stripped, says CoreDNS-1.8.3, and answers DNS, /health, /ready and metrics', async () => {
    expect(existsSync(COREDNS_ARCHIVE), `the CoreDNS source archive is missing: ${COREDNS_ARCHIVE}; images/coredns.tar could not be built`).toBe(true);
    const layout = untar(bytes('coredns.tar'));
    const p = walkLayout(layout);
    expect(p.config.architecture).toBe(native);
    expect(p.config.config.Entrypoint).toEqual(['/coredns']);
    expect(p.config.config.ExposedPorts).toEqual({ '53/tcp': {}, '53/udp': {}, '9153/tcp': {} });
    const bundle = join(mkdtempSync(join(work, 'bundle-')), 'b');
    execFileSync('umoci', ['unpack', '--image', `${layout}:1.8.3`, bundle], { stdio: 'pipe' });
    expect(JSON.parse(readFileSync(join(bundle, 'config.json'), 'utf8')).process.args).toEqual(['/coredns']);
    const coredns = join(bundle, 'rootfs/coredns');
    expect(lstatSync(coredns).mode & 0o777).toBe(0o755);

    // The image holds exactly the binary the cache recorded.
    const root = join(cacheDir(process.env), '..', 'coredns-build');
    const dirs = execFileSync('sh', ['-c', 'ls -d "$1"/1.8.3-"$2"-*/', 'sh', root, native], { encoding: 'utf8' }).trim().split('\n');
    const records = dirs.map((d) => JSON.parse(readFileSync(join(d, 'build.json'), 'utf8')));
    expect(records.map((r) => r.files.coredns.sha256)).toContain(sha(readFileSync(coredns)));

    expect(execFileSync('file', ['-b', coredns], { encoding: 'utf8' })).toMatch(/statically linked.*, stripped/);
    const version = execFileSync(coredns, ['-version'], { encoding: 'utf8' });
    expect(version).toMatch(new RegExp(`^CoreDNS-1\\.8\\.3\\nlinux/${native}, go1\\.\\d+\\.\\d+, 4293992\\n$`));

    await answers(coredns);
  }, 120_000);
});

/** A free port on 127.0.0.1 (TCP; CoreDNS serves DNS on the same number over UDP too). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  await new Promise((r) => server.close(r));
  return port;
}

/** A DNS server on 127.0.0.1 for CoreDNS to forward to: web.hardway.test is 10.1.2.3, any other name NXDOMAIN; counts questions. */
async function upstream(): Promise<{ port: number; asked: string[]; close: () => void }> {
  const socket = createSocket('udp4');
  const asked: string[] = [];
  socket.on('message', (q, from) => {
    let at = 12;
    const labels: string[] = [];
    while (q[at]! > 0) {
      labels.push(q.subarray(at + 1, at + 1 + q[at]!).toString('latin1'));
      at += q[at]! + 1;
    }
    const question = q.subarray(12, at + 5); // name, its end, type and class
    const name = labels.join('.').toLowerCase();
    asked.push(name);
    const known = name === 'web.hardway.test' && q.readUInt16BE(at + 1) === 1;
    const header = Buffer.alloc(12);
    header.writeUInt16BE(q.readUInt16BE(0), 0);
    header.writeUInt16BE(known ? 0x8180 : 0x8183, 2); // a response, recursion available; NXDOMAIN for the rest
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(known ? 1 : 0, 6);
    const answer = known ? Buffer.from([0xc0, 0x0c, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 10, 1, 2, 3]) : Buffer.alloc(0);
    socket.send(Buffer.concat([header, question, answer]), from.port, from.address);
  });
  await new Promise<void>((r) => socket.bind(0, '127.0.0.1', r));
  return { port: socket.address().port, asked, close: () => socket.close() };
}

/** Runs `coredns` with a Corefile of the built plugins on 127.0.0.1 ports and asks it questions. */
async function answers(coredns: string): Promise<void> {
  const up = await upstream();
  const [port, health, ready, metrics] = [await freePort(), await freePort(), await freePort(), await freePort()];
  const dir = mkdtempSync(join(work, 'corefile-'));
  writeFileSync(join(dir, 'Corefile'), [
    `.:${port} {`, '    errors', `    health 127.0.0.1:${health}`, `    ready 127.0.0.1:${ready}`, `    prometheus 127.0.0.1:${metrics}`,
    '    log', '    loadbalance', '    cache 30', `    forward . 127.0.0.1:${up.port}`, '}', '',
  ].join('\n'));
  const child = spawn(coredns, ['-conf', join(dir, 'Corefile')], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  try {
    const get = async (p: number, path: string) => {
      const r = await fetch(`http://127.0.0.1:${p}${path}`);
      return { status: r.status, body: await r.text() };
    };
    const end = Date.now() + 20_000;
    for (;;) {
      const h = await get(health, '/health').catch(() => undefined);
      if (h?.status === 200) {
        expect(h.body).toBe('OK');
        break;
      }
      if (Date.now() > end) throw new Error(`coredns did not answer /health within 20 s:\n${out}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(await get(ready, '/ready')).toEqual({ status: 200, body: 'OK' });

    const resolver = new dns.Resolver({ timeout: 2000, tries: 2 });
    resolver.setServers([`127.0.0.1:${port}`]);
    expect(await resolver.resolve4('web.hardway.test')).toEqual(['10.1.2.3']);
    expect(await resolver.resolve4('web.hardway.test')).toEqual(['10.1.2.3']);
    expect(up.asked.filter((n) => n === 'web.hardway.test')).toHaveLength(1); // the second answer came from cache
    await expect(resolver.resolve4('nothing.hardway.test')).rejects.toMatchObject({ code: 'ENOTFOUND' });
    expect(out).toMatch(/"A IN web\.hardway\.test\. udp \d+ false \d+" NOERROR/); // the log plugin
    expect((await get(metrics, '/metrics')).body).toMatch(/^coredns_dns_requests_total\{.*\} [1-9]/m);
  } finally {
    child.kill('SIGTERM');
    up.close();
  }
}
