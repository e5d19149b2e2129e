// The images step on fake workers: the archives of images/ in, uploads and `ctr images import`
// out, only where the archive or the image (by name and digest) is not already there. The fake
// machine answers `ctr -n k8s.io images ls` from what it imported, as containerd would.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { imagesStep } from '../../src/steps/images.ts';
import { parseImageList } from '../../src/probes/containerd.ts';
import { remoteEntry } from '../../src/commands/index.ts';
import { stepNames } from '../../src/cli/entry.ts';
import { imageArchives } from '../../src/images/build.ts';
import { PAUSE_IMAGE, WEB_IMAGE } from '../../src/images/names.ts';
import { archiveImages, type ArchiveImage } from '../../src/images/oci.ts';
import type { Inventory } from '../../src/inventory.ts';
import { FakeTransport } from '../fixtures/fake-transport.ts';
import { imagesListing } from '../fixtures/ctr-images.ts';
import { images as imagesProbe } from '../../src/probes/containerd.ts';
import { fakeCluster, inventoryOf, runEngine } from './engine.helpers.ts';

const DIR = '/var/lib/hardway/images';
const IMPORT = /^\/usr\/local\/bin\/ctr -n k8s\.io images import (\S+)$/;
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** What each archive holds, by the archive's SHA-256: what the fake containerd imports. */
type Contents = Map<string, ArchiveImage[]>;

/** A project whose images/ holds the pause and web archives (built from stand-in busybox bytes). */
function projectWithImages(): { inv: Inventory; byName: Map<string, ArchiveImage>; contents: Contents } {
  const inv = inventoryOf();
  mkdirSync(join(inv.dir, 'images'));
  const contents: Contents = new Map();
  const byName = new Map<string, ArchiveImage>();
  for (const a of imageArchives(Buffer.from('busybox stand-in\n'), { version: '1:1.35.0-4', arch: 'amd64' })) {
    const file = join(inv.dir, 'images', a.file);
    writeFileSync(file, a.data);
    const images = archiveImages(file);
    contents.set(sha(a.data), images);
    for (const i of images) byName.set(i.name, i);
  }
  return { inv, byName, contents };
}

/** A worker whose containerd holds `images` (name -> digest) and imports archives it is given. */
function withContainerd(t: FakeTransport, images: Map<string, string>, contents: Contents, opts: { down?: boolean } = {}): FakeTransport {
  t.answer(imagesProbe, (names) => (opts.down ? { code: 1, stdout: '' } : { code: 0, stdout: imagesListing(names, images) }));
  t.handlers.push(
    [IMPORT, (m, fake) => {
      const file = fake.files.get(m[1]!);
      if (!file) return { code: 1, stdout: '', stderr: `ctr: open ${m[1]}: no such file or directory` };
      for (const i of contents.get(sha(file.content)) ?? []) images.set(i.name, i.digest);
      return { code: 0, stdout: `unpacking ${m[1]}...done\n`, stderr: '' };
    }],
  );
  return t;
}

function cluster(inv: Inventory, contents: Contents, state: (host: string) => Map<string, string>, opts: { down?: boolean } = {}) {
  const fakes = fakeCluster(inv);
  for (const [host, t] of fakes) withContainerd(t, state(host), contents, opts);
  return fakes;
}

const planned = (output: string, host: string) => output.split('\n').filter((l) => l.startsWith(`${host}:   put`) || l.startsWith(`${host}:   run`));

describe('images step', () => {
  it('on fresh workers plans an upload and an import per archive, and nothing on the control plane', async () => {
    const { inv, contents } = projectWithImages();
    const fakes = cluster(inv, contents, () => new Map());
    const { result, output } = await runEngine([imagesStep], inv, fakes, { dryRun: true });
    expect(result.results.map((r) => `${r.machine}:${r.changes}`)).toEqual(['node-0:4', 'node-1:4']);
    expect(planned(output, 'node-0')).toEqual([
      `node-0:   put ${DIR}/pause.tar 0644 root:root (missing)`,
      `node-0:   put ${DIR}/web.tar 0644 root:root (missing)`,
      `node-0:   run: /usr/local/bin/ctr -n k8s.io images import ${DIR}/pause.tar (${PAUSE_IMAGE} not in containerd)`,
      `node-0:   run: /usr/local/bin/ctr -n k8s.io images import ${DIR}/web.tar (${WEB_IMAGE} not in containerd)`,
    ]);
    for (const f of fakes.values()) expect(f.changesRun).toEqual([]);
    expect(fakes.get('server')!.commands).toEqual([]);
  });

  it('converges: uploads and imports once, and a rerun plans nothing and runs nothing', async () => {
    const { inv, byName, contents } = projectWithImages();
    const state = new Map(['node-0', 'node-1'].map((h) => [h, new Map<string, string>()]));
    const fakes = cluster(inv, contents, (h) => state.get(h) ?? new Map());
    const first = await runEngine([imagesStep], inv, fakes);
    expect(first.result).toMatchObject({ ok: true, changed: 8, failed: 0 });
    const node1 = fakes.get('node-1')!;
    expect(node1.uploads.map((u) => `${u.path} ${u.mode.toString(8)}`)).toEqual([`${DIR}/pause.tar 644`, `${DIR}/web.tar 644`]);
    expect(node1.changesRun).toEqual([`/usr/local/bin/ctr -n k8s.io images import ${DIR}/pause.tar`, `/usr/local/bin/ctr -n k8s.io images import ${DIR}/web.tar`]);
    expect(state.get('node-1')).toEqual(new Map([...byName].map(([n, i]) => [n, i.digest])));

    for (const f of fakes.values()) f.commands.length = 0;
    const second = await runEngine([imagesStep], inv, fakes);
    expect(second.result).toMatchObject({ ok: true, changed: 0 });
    expect(second.result.results.map((r) => r.status)).toEqual(['unchanged', 'unchanged']);
    for (const f of fakes.values()) expect(f.changesRun).toEqual([]);
    // One facts round trip per worker: the archives' stats and the image list together, filtered
    // to the archives' images (containerd lists no other).
    expect(node1.commands.filter((c) => c.startsWith('facts: probe'))).toEqual([`facts: probe /usr/local/bin/ctr -n k8s.io images ls ${[...byName.keys()].map((n) => `'name==${JSON.stringify(n)}'`).join(' ')}`]);
  });

  it('imports only the archive whose image is missing or has another digest, and uploads only what differs', async () => {
    const { inv, byName, contents } = projectWithImages();
    const pause = byName.get(PAUSE_IMAGE)!;
    const old = `sha256:${'0'.repeat(64)}`;
    const fakes = cluster(inv, contents, (h) => (h === 'node-0' ? new Map([[PAUSE_IMAGE, pause.digest], [WEB_IMAGE, old], ['docker.io/library/other:1', old]]) : new Map([[PAUSE_IMAGE, pause.digest]])));
    // node-0 already has both archives; node-1 has none, but containerd already holds its pause image.
    const node0 = fakes.get('node-0')!;
    for (const f of ['pause.tar', 'web.tar']) node0.files.set(`${DIR}/${f}`, { content: readFileSync(join(inv.dir, 'images', f)), mode: 0o644, owner: 'root:root' });
    const { result, output } = await runEngine([imagesStep], inv, fakes, { dryRun: true });
    expect(result.results.map((r) => `${r.machine}:${r.changes}`)).toEqual(['node-0:1', 'node-1:3']);
    const web = byName.get(WEB_IMAGE)!.digest;
    expect(planned(output, 'node-0')).toEqual([
      `node-0:   run: /usr/local/bin/ctr -n k8s.io images import ${DIR}/web.tar (${WEB_IMAGE} is sha256:000000000000 in containerd, the archive has ${web.slice(0, 19)})`,
    ]);
    expect(planned(output, 'node-1')).toEqual([
      `node-1:   put ${DIR}/pause.tar 0644 root:root (missing)`,
      `node-1:   put ${DIR}/web.tar 0644 root:root (missing)`,
      `node-1:   run: /usr/local/bin/ctr -n k8s.io images import ${DIR}/web.tar (${WEB_IMAGE} not in containerd)`,
    ]);
  });

  it('plans every import when containerd does not answer, and says so', async () => {
    const { inv, contents } = projectWithImages();
    const fakes = cluster(inv, contents, () => new Map(), { down: true });
    const { output } = await runEngine([imagesStep], inv, fakes, { dryRun: true, only: ['node-0'] });
    expect(planned(output, 'node-0').filter((l) => l.includes('import'))).toEqual([
      `node-0:   run: /usr/local/bin/ctr -n k8s.io images import ${DIR}/pause.tar (${PAUSE_IMAGE} not known: containerd did not list its images (ctr exit 1))`,
      `node-0:   run: /usr/local/bin/ctr -n k8s.io images import ${DIR}/web.tar (${WEB_IMAGE} not known: containerd did not list its images (ctr exit 1))`,
    ]);
  });

  it('without images/ (or with no archive in it) plans nothing, asks the machines nothing, and says so once', async () => {
    for (const setup of [() => {}, (dir: string) => (mkdirSync(join(dir, 'images')), writeFileSync(join(dir, 'images', 'notes.txt'), 'x'))]) {
      const inv = inventoryOf();
      setup(inv.dir);
      const fakes = cluster(inv, new Map(), () => new Map());
      const { result, output } = await runEngine([imagesStep], inv, fakes);
      expect(result.results.map((r) => `${r.machine}:${r.status}`)).toEqual(['node-0:unchanged', 'node-1:unchanged']);
      expect(output.match(/nothing to load/g)).toHaveLength(1);
      expect(output).toContain('==> images: ');
      expect(output).toContain('no archives (images/*.tar beside machines.txt), nothing to load');
      for (const f of fakes.values()) expect(f.commands).toEqual([]);
    }
  });

  it('fails, naming both archives, when two hold the same image name', async () => {
    const { inv, contents } = projectWithImages();
    writeFileSync(join(inv.dir, 'images', 'pause-copy.tar'), imageArchives(Buffer.from('other busybox'), { version: '1', arch: 'amd64' })[0]!.data);
    const fakes = cluster(inv, contents, () => new Map());
    const { result } = await runEngine([imagesStep], inv, fakes, { dryRun: true });
    expect(result.results.map((r) => r.status)).toEqual(['failed', 'failed']);
    expect(result.results[0]!.error).toContain(`images/pause-copy.tar and images/pause.tar both hold ${PAUSE_IMAGE}`);
  });

  it('fails with what to do for an archive that has no index.json (an old docker save)', async () => {
    const { inv, contents } = projectWithImages();
    const { writeTar } = await import('../../src/images/tar.ts');
    writeFileSync(join(inv.dir, 'images', 'legacy.tar'), writeTar([{ type: 'file', path: 'manifest.json', mode: 0o644, data: Buffer.from('[]') }]));
    const fakes = cluster(inv, contents, () => new Map());
    const { result } = await runEngine([imagesStep], inv, fakes, { dryRun: true, only: ['node-0'] });
    expect(result.results[0]!.error).toMatch(/^images\/legacy\.tar has no index\.json: not an OCI image archive\n  hint: use an OCI archive/);
  });
});

describe('images step parts', () => {
  it('parses `ctr images ls` (sizes with a space, CRI digest refs included)', () => {
    const d = `sha256:${'a'.repeat(64)}`;
    const text = [
      'REF                                   TYPE                                       DIGEST  SIZE    PLATFORMS   LABELS',
      `localhost/hardway/pause:1             application/vnd.oci.image.manifest.v1+json ${d} 1.9 MiB linux/amd64 -`,
      `localhost/hardway/pause@${d} application/vnd.oci.image.manifest.v1+json ${d} 1.9 MiB linux/amd64 io.cri-containerd.image=managed`,
      '',
    ].join('\n');
    expect(parseImageList(text)).toEqual(new Map([['localhost/hardway/pause:1', d], [`localhost/hardway/pause@${d}`, d]]));
    expect(parseImageList('REF TYPE DIGEST SIZE PLATFORMS LABELS\n')).toEqual(new Map());
  });

  it('runs in `up` after containerd and before the kubelet, and alone as `hardway images`', () => {
    const steps = (name: string) => stepNames(remoteEntry(name).steps);
    const up = steps('up');
    expect(up.indexOf('images')).toBe(up.indexOf('containerd') + 1);
    expect(up.indexOf('images')).toBeLessThan(up.indexOf('kubelet'));
    expect(steps('images')).toEqual(['images']);
    expect(steps('bootstrap-workers')).not.toContain('images');
  });
});


describe('the images probe: filtered to the names asked, one call for every plan asking at once', () => {
  it('lists only the names asked, and the plans of one round share one ctr call for the union', async () => {
    const { coalescedFacts } = await import('../../src/engine/coalesced-facts.ts');
    const { createFacts } = await import('../../src/engine/facts.ts');
    const { images } = await import('../../src/probes/containerd.ts');
    const digest = `sha256:${'ab'.repeat(32)}`;
    const t = new FakeTransport('node-0');
    t.answer(images, (names) => ({ code: 0, stdout: imagesListing(names, [['r.io/a:1', digest], ['r.io/b:1', digest], ['r.io/c:1', digest]]) }));
    const facts = coalescedFacts(createFacts(t));
    const [x, y] = await Promise.all([facts.ask({ i: images.ask(['r.io/a:1']) }), facts.ask({ i: images.ask(['r.io/b:1', 'r.io/gone:1']) })]);
    expect(t.commands.filter((c) => c.includes('images ls'))).toEqual([`facts: probe /usr/local/bin/ctr -n k8s.io images ls 'name=="r.io/a:1"' 'name=="r.io/b:1"' 'name=="r.io/gone:1"'`]);
    // Each plan reads its own names from the shared answer: a missing one is still missing.
    for (const got of [x.i, y.i]) expect([...parseImageList(got.stdout).keys()]).toEqual(['r.io/a:1', 'r.io/b:1']);
  });
});

describe('archiveImages reads each archive once per process', () => {
  it('gives the same images for the same file, and reads it again once the file is rewritten', () => {
    const inv = inventoryOf();
    mkdirSync(join(inv.dir, 'images'));
    const file = join(inv.dir, 'images', 'one.tar');
    const [a, b] = imageArchives(Buffer.from('busybox stand-in\n'), { version: '1:1.35.0-4', arch: 'amd64' });
    writeFileSync(file, a!.data);
    const first = archiveImages(file);
    const before = first.map((i) => i.name);
    first[0]!.name = 'changed by a caller';
    expect(archiveImages(file)).toEqual(archiveImages(join(inv.dir, 'images', 'one.tar')));
    expect(archiveImages(file).map((i) => i.name)).toEqual(before);
    writeFileSync(file, b!.data);
    expect(archiveImages(file).map((i) => i.name)).not.toEqual(before);
  });
});
