// The sandbox image, checked before it bites: where a worker gets the image cluster.yaml's
// sandboxImage names (containerd's cache, images/, a mirror, or its registry through a test pull),
// what the images step and `up` say when nothing gives it, and what verify says.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { factsFrom, type FactRequest } from '../../src/engine/facts.ts';
import { imageArchives } from '../../src/images/build.ts';
import { PAUSE_IMAGE } from '../../src/images/names.ts';
import type { Inventory } from '../../src/inventory.ts';
import { imagesStep } from '../../src/steps/images.ts';
import { sandboxOnWorker, sandboxSource, sandboxWithoutSource } from '../../src/steps/support/sandbox-image.ts';
import type { FakeTransport } from '../fixtures/fake-transport.ts';
import { imagesListing } from '../fixtures/ctr-images.ts';
import { images, testPull } from '../../src/probes/containerd.ts';
import { fakeCluster, inventoryOf, projectDir, runCommand, runEngine } from './engine.helpers.ts';

const UPSTREAM = 'registry.k8s.io/pause:3.2';
// The test pull as the machines' command logs show it.
const PULL = /ctr content fetch-object --hosts-dir \/etc\/containerd\/certs\.d (\S+) 2>&1 >\/dev\/null$/;
const DIGEST = `sha256:${'a'.repeat(64)}`;

function withSandbox(image: string, registries?: Record<string, unknown>): Inventory {
  const inv = inventoryOf();
  return { ...inv, settings: { ...inv.settings, sandboxImage: image, ...(registries ? { registries: registries as never } : {}) } };
}

/** Workers whose containerd lists `cached` and whose test pull answers `pull` (exit code, line). */
function workers(inv: Inventory, cached: string[], pull: { code: number; line: string }) {
  const fakes = fakeCluster(inv);
  for (const t of fakes.values()) {
    t.answer(images, (names) => ({ code: 0, stdout: imagesListing(names, cached.map((c): [string, string] => [c, DIGEST])) }))
      .answer(testPull, () => ({ code: pull.code, stdout: `${pull.line}\n` }));
  }
  return fakes;
}

const pulls = (t: FakeTransport) => t.commands.filter((c) => PULL.test(c));

describe('where the sandbox image comes from', () => {
  const archives = [{ name: 'pause.tar', images: [{ name: PAUSE_IMAGE }] }];
  it('an archive of images/, a mirror (named or _default), nowhere for localhost/ names, else upstream', () => {
    expect(sandboxSource(withSandbox(PAUSE_IMAGE), PAUSE_IMAGE, archives)).toEqual({ kind: 'archive', archive: 'pause.tar' });
    expect(sandboxSource(withSandbox(PAUSE_IMAGE), PAUSE_IMAGE, [])).toEqual({ kind: 'nowhere', registry: 'localhost' });
    expect(sandboxSource(withSandbox(PAUSE_IMAGE, { localhost: {} }), PAUSE_IMAGE, [])).toEqual({ kind: 'mirror', registry: 'localhost' });
    expect(sandboxSource(withSandbox(UPSTREAM, { _default: {} }), UPSTREAM, [])).toEqual({ kind: 'mirror', registry: 'registry.k8s.io' });
    expect(sandboxSource(withSandbox(UPSTREAM), UPSTREAM, [])).toEqual({ kind: 'upstream', registry: 'registry.k8s.io' });
  });

  it('the jumpbox check names the image and says to run hardway build-images; nothing when unset or held by images/', () => {
    const missing = sandboxWithoutSource(withSandbox(PAUSE_IMAGE), [])!;
    expect(missing.problem).toBe(`the sandbox image ${PAUSE_IMAGE} (sandboxImage in cluster.yaml) is not in images/ and no registry serves localhost/ names: the nodes would turn Ready and every pod would stay in ContainerCreating`);
    expect(missing.hint).toContain('run "hardway build-images" (it writes images/pause.tar holding localhost/hardway/pause:1), then "hardway up"');
    expect(sandboxWithoutSource(withSandbox(PAUSE_IMAGE), archives)).toBeUndefined();
    expect(sandboxWithoutSource(inventoryOf(), [])).toBeUndefined();
    expect(sandboxWithoutSource(withSandbox(UPSTREAM), [])).toBeUndefined();
  });

  it('verify: an archive image containerd lacks is a problem with the images command for that worker', async () => {
    const facts = factsFrom(async (asked: FactRequest[]) => asked.map(() => ({ code: 0, stdout: '' })), async () => { throw new Error('no wait'); }, () => undefined);
    const inv = withSandbox(PAUSE_IMAGE);
    expect(await sandboxOnWorker(facts, inv, 'node-0', archives, new Set(), false)).toEqual({
      problem: `the sandbox image ${PAUSE_IMAGE} (sandboxImage in cluster.yaml) is in images/pause.tar but not in containerd on node-0: every new pod there would stay in ContainerCreating`,
      hint: 'run "hardway images --node node-0"',
    });
    expect(await sandboxOnWorker(facts, inv, 'node-0', archives, new Set([PAUSE_IMAGE]), false)).toBeUndefined();
    // The images step is about to load it.
    expect(await sandboxOnWorker(facts, inv, 'node-0', archives, new Set(), true)).toBeUndefined();
  });
});

describe('the images step checks the sandbox image on each worker before the kubelet needs it', () => {
  it('an upstream image not cached that the worker cannot pull fails the worker with the pull\'s words and what to do', async () => {
    const inv = withSandbox(UPSTREAM);
    const fakes = workers(inv, [], { code: 1, line: 'ctr: failed to resolve reference "registry.k8s.io/pause:3.2": dial tcp: lookup registry.k8s.io: no such host' });
    const { result } = await runEngine([imagesStep], inv, fakes, { only: ['node-0'] });
    expect(result.results[0]).toMatchObject({ machine: 'node-0', status: 'failed' });
    expect(result.results[0]!.error).toContain(`the sandbox image ${UPSTREAM} (sandboxImage in cluster.yaml) is not in containerd on node-0, not in images/, and node-0 cannot pull it from registry.k8s.io (ctr: failed to resolve reference "registry.k8s.io/pause:3.2": dial tcp: lookup registry.k8s.io: no such host)`);
    expect(result.results[0]!.error).toContain('or add a mirror of registry.k8s.io under registries: in cluster.yaml');
    expect(fakes.get('node-0')!.changesRun).toEqual([]);
  });

  it('an upstream image the worker pulls, or one containerd holds already (no test pull then), is no problem', async () => {
    const inv = withSandbox(UPSTREAM);
    const pulling = workers(inv, [], { code: 0, line: '' });
    expect((await runEngine([imagesStep], inv, pulling)).result).toMatchObject({ ok: true, changed: 0 });
    expect(pulls(pulling.get('node-0')!)).toHaveLength(1);
    const cached = workers(inv, [UPSTREAM], { code: 1, line: 'never asked' });
    expect((await runEngine([imagesStep], inv, cached)).result).toMatchObject({ ok: true, changed: 0 });
    expect(pulls(cached.get('node-0')!)).toEqual([]);
  });

  it('a localhost/ image in no archive fails every worker that lacks it, and no test pull is tried', async () => {
    const inv = withSandbox(PAUSE_IMAGE);
    const fakes = workers(inv, [], { code: 1, line: 'never asked' });
    const { result } = await runEngine([imagesStep], inv, fakes);
    expect(result.results.map((r) => r.status)).toEqual(['failed', 'failed']);
    expect(result.results[0]!.error).toContain('no registry serves localhost/ names');
    expect(pulls(fakes.get('node-0')!)).toEqual([]);
  });
});

describe('hardway up checks the sandbox image before any change', () => {
  it('a lab-style cluster.yaml naming localhost/hardway/pause:1 without images/: exit 1 with what to run, no machine asked, pki/ not made', async () => {
    const dir = projectDir();
    writeFileSync(join(dir, 'cluster.yaml'), `sandboxImage: ${PAUSE_IMAGE}\n`);
    const fakes = fakeCluster(inventoryOf());
    const r = await runCommand('up', [], dir, fakes);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`the sandbox image ${PAUSE_IMAGE} (sandboxImage in cluster.yaml) is not in images/`);
    expect(r.stderr).toContain('hardway build-images');
    for (const f of fakes.values()) expect(f.commands).toEqual([]);
    expect(existsSync(join(dir, 'pki'))).toBe(false);
  });

  it('--dry-run warns and goes on; with images/pause.tar from build-images there is nothing to say', async () => {
    const dir = projectDir();
    writeFileSync(join(dir, 'cluster.yaml'), `sandboxImage: ${PAUSE_IMAGE}\n`);
    const dry = await runCommand('up', ['--only', 'images', '--node', 'node-0', '--dry-run'], dir, fakeCluster(inventoryOf()));
    expect(dry.stdout).toContain(`warning: the sandbox image ${PAUSE_IMAGE} (sandboxImage in cluster.yaml) is not in images/`);
    expect(dry.stdout).toContain('==> images');
    mkdirSync(join(dir, 'images'));
    for (const a of imageArchives(Buffer.from('busybox stand-in\n'), { version: '1:1.35.0-4', arch: 'amd64' })) writeFileSync(join(dir, 'images', a.file), a.data);
    const r = await runCommand('up', ['--only', 'images', '--node', 'node-0', '--dry-run'], dir, fakeCluster(inventoryOf()));
    expect(r.stdout).toContain('==> images');
    expect(r.stderr + r.stdout).not.toContain('sandbox image');
  });
});
