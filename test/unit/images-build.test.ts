// `hardway build-images`: OCI image archives made in TypeScript, the same bytes on every build. The
// layout is checked by following index.json -> manifest -> config and layer through their
// digests, the layer and the tar format with GNU tar, and the whole image independently with
// umoci (which verifies every blob against its digest and unpacks a runtime bundle). The real
// build, which fetches busybox-static with apt-get download (the network, the first time), is in
// test/e2e/build-images.test.ts.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { lstatSync, mkdtempSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { layoutHelpers } from '../helpers/oci-layout.ts';
import { APPLETS, imageArchives, WEB_PAGE } from '../../src/images/build.ts';
import { PAUSE_IMAGE, WEB_IMAGE } from '../../src/images/names.ts';
import { archiveImages, tagOf } from '../../src/images/oci.ts';
import { readTarMembers, writeTar } from '../../src/images/tar.ts';

const work = mkdtempSync(join(tmpdir(), 'hardway-images-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const { untar, listing, walkLayout } = layoutHelpers(work);
const FAKE_BUSYBOX = Buffer.from('\x7fELF not really busybox, but bytes to put in a layer\n'.repeat(40));


describe('OCI image archives (pure: any busybox bytes)', () => {
  const source = { version: '1:1.35.0-4+deb12u1+b1', arch: 'amd64' };

  it('are byte-for-byte the same when built twice, and differ when busybox differs', () => {
    const a = imageArchives(FAKE_BUSYBOX, source);
    const b = imageArchives(Buffer.from(FAKE_BUSYBOX), { ...source });
    expect(a.map((x) => x.file)).toEqual(['pause.tar', 'web.tar']);
    expect(a.map((x) => sha(x.data))).toEqual(b.map((x) => sha(x.data)));
    const c = imageArchives(Buffer.concat([FAKE_BUSYBOX, Buffer.from('!')]), source);
    expect(sha(c[0]!.data)).not.toBe(sha(a[0]!.data));
  });

  it('hold an OCI layout whose index, manifest, config and layer digests match their bytes', () => {
    const [pause, web] = imageArchives(FAKE_BUSYBOX, source) as [ReturnType<typeof imageArchives>[0], ReturnType<typeof imageArchives>[0]];
    // The outer tar: sorted, owner 0:0, every time the epoch.
    const names = listing(pause.data).map((l) => l.split(/\s+/).pop()!);
    expect(names).toEqual([...names].sort());
    expect(names[0]).toBe('blobs/');
    expect(names.slice(-2)).toEqual(['index.json', 'oci-layout']);
    for (const line of listing(pause.data)) expect(line).toMatch(/^\S+ 0\/0 +\d+ 1970-01-01 00:00:00 /);

    const p = walkLayout(untar(pause.data));
    expect(p.entry.annotations).toEqual({ 'io.containerd.image.name': PAUSE_IMAGE, 'org.opencontainers.image.ref.name': '1' });
    expect(p.entry.platform).toEqual({ architecture: 'amd64', os: 'linux' });
    expect(p.config).toMatchObject({ architecture: 'amd64', os: 'linux', created: '1970-01-01T00:00:00Z' });
    expect(p.config.config.Entrypoint).toEqual(['/bin/sleep', '2147483647']);
    expect(p.config.history[0].created_by).toContain('busybox-static 1:1.35.0-4+deb12u1+b1');

    const w = walkLayout(untar(web.data));
    expect(w.entry.annotations['io.containerd.image.name']).toBe(WEB_IMAGE);
    expect(w.config.config.Entrypoint).toEqual(['/bin/httpd', '-f', '-p', '80', '-h', '/www']);
    expect(w.config.config.ExposedPorts).toEqual({ '80/tcp': {} });

    // The layer: /bin/busybox, a relative link per applet, and for web the page; all 0:0 at the epoch.
    const rootfs = untar(w.layer);
    expect(readFileSync(join(rootfs, 'bin/busybox')).equals(FAKE_BUSYBOX)).toBe(true);
    expect(lstatSync(join(rootfs, 'bin/busybox')).mode & 0o777).toBe(0o755);
    for (const a of ['sh', 'sleep', 'httpd', 'true', 'cat', 'echo', 'ls', 'wget', 'hostname']) {
      expect(APPLETS).toContain(a);
      expect(readlinkSync(join(rootfs, 'bin', a))).toBe('busybox');
    }
    expect(readFileSync(join(rootfs, 'www/index.html'), 'utf8')).toBe(WEB_PAGE);
    expect(WEB_PAGE).toContain('hardway web image');
    const layerLines = listing(w.layer);
    for (const line of layerLines) expect(line).toMatch(/^\S+ 0\/0 +\d+ 1970-01-01 00:00:00 /);
    const layerNames = layerLines.map((l) => l.split(/\s+/)[5]!);
    expect(layerNames).toEqual([...layerNames].sort());
    expect(listing(p.layer).some((l) => l.includes('www'))).toBe(false);
  });

  it('name the architecture they were built for', () => {
    const [pause] = imageArchives(FAKE_BUSYBOX, { ...source, arch: 'arm64' });
    const p = walkLayout(untar(pause!.data));
    expect(p.config.architecture).toBe('arm64');
    expect(p.entry.platform.architecture).toBe('arm64');
  });

  it('are read back (names and digests) from index.json, as hardway images compares them with containerd', () => {
    const [pause] = imageArchives(FAKE_BUSYBOX, source);
    const file = join(work, 'pause.tar');
    writeFileSync(file, pause!.data);
    const [image] = archiveImages(file);
    const digest = walkLayout(untar(pause!.data)).entry.digest;
    expect(image).toEqual({ name: PAUSE_IMAGE, digest });
  });

  it('tagOf: the tag of a reference, latest when none', () => {
    expect(tagOf('localhost/hardway/pause:1')).toBe('1');
    expect(tagOf('localhost:5000/x')).toBe('latest');
  });
});

describe('tar', () => {
  it('writes what GNU tar reads, long names included', () => {
    const long = `${'d'.repeat(90)}/${'f'.repeat(60)}`;
    const data = writeTar([
      { type: 'dir', path: 'a', mode: 0o755 },
      { type: 'file', path: 'a/x', mode: 0o600, data: Buffer.from('hello') },
      { type: 'symlink', path: 'a/y', target: 'x' },
      { type: 'file', path: long, mode: 0o644, data: Buffer.alloc(1000, 7) },
    ]);
    expect(data.length % 512).toBe(0);
    const out = untar(data);
    expect(readFileSync(join(out, 'a/x'), 'utf8')).toBe('hello');
    expect(lstatSync(join(out, 'a/x')).mode & 0o777).toBe(0o600);
    expect(readlinkSync(join(out, 'a/y'))).toBe('x');
    expect(readFileSync(join(out, long)).equals(Buffer.alloc(1000, 7))).toBe(true);
    expect(readTarMembers(join(out, '..', 'archive.tar'), [long]).get(long)?.data.length).toBe(1000);
  });

  it('reads members of archives GNU tar wrote: ./ prefixes, pax and GNU long names', () => {
    const src = mkdtempSync(join(work, 'src-'));
    const long = `${'n'.repeat(120)}.json`;
    writeFileSync(join(src, 'index.json'), '{"a":1}');
    writeFileSync(join(src, long), 'long');
    for (const format of ['posix', 'gnu']) {
      const file = join(work, `${format}.tar`);
      execFileSync('tar', ['-cf', file, `--format=${format}`, '-C', src, '.']);
      const found = readTarMembers(file, ['index.json', long, 'absent']);
      expect(found.get('index.json')?.data.toString()).toBe('{"a":1}');
      expect(found.get(long)?.data.toString()).toBe('long');
      expect(found.has('absent')).toBe(false);
    }
  });
});
