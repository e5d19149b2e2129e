// `hardway build-images` for real: busybox-static fetched from Debian with apt-get download (the
// network the first time, then the user cache), the same bytes on every build, and umoci's
// independent check of each image. In the e2e project because it needs the network; the pure
// format tests are test/unit/images-build.test.ts.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { lstatSync, mkdtempSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';
import { WEB_PAGE } from '../../src/images/build.ts';
import { layoutHelpers } from '../helpers/oci-layout.ts';

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
