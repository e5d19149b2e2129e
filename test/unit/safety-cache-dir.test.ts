// Issue 34, item 8: hardway's cache (${XDG_CACHE_HOME}/hardway/downloads, the builds beside it)
// that is a link to nothing, a file, or on a read-only file system is a clear error naming the
// directory and what to do, never "internal error" with a stack. `hardway download` runs against
// the fake release server on 127.0.0.1; the read-only file system is a real read-only bind mount.
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { aptFor } from '../../src/download/apt.ts';
import { cachedBuild } from '../../src/download/build-cache.ts';
import { FailureError, InputError } from '../../src/errors.ts';
import { runCli } from '../helpers/cli.ts';
import { buildFakeReleases, startReleaseServer, type ReleaseServer } from '../fixtures/download/release-server.ts';
import { failedCleanly, readOnlyView, type Mount } from './safety.helpers.ts';

const work = mkdtempSync(join(tmpdir(), 'hardway-cache-dir-'));
let fake: ReturnType<typeof buildFakeReleases>;
let server: ReleaseServer;
const mounts: Mount[] = [];

beforeAll(async () => {
  fake = buildFakeReleases(join(work, 'fake'));
  server = await startReleaseServer(fake.files);
});
afterEach(() => {
  for (const m of mounts.splice(0)) m.unmount();
});
afterAll(async () => {
  await server.close();
  rmSync(work, { recursive: true, force: true });
});

/** `hardway download` in a fresh project with XDG_CACHE_HOME at `cache`. */
async function download(cache: string) {
  const project = mkdtempSync(join(work, 'project-'));
  const env = { HOME: work, XDG_CACHE_HOME: cache, HARDWAY_VERSIONS_FILE: fake.versionsFile, HARDWAY_DOWNLOAD_BASE_URL: server.baseUrl };
  return runCli(['download', '--arch', 'amd64'], project, env);
}

const ELSEWHERE = 'or set XDG_CACHE_HOME to a directory you may write';

describe('the download cache directory (issue 34, item 8)', () => {
  it('a link to nothing at ~/.cache/hardway/downloads: exit 2 naming the link and its target, and what to do', async () => {
    const cache = mkdtempSync(join(work, 'xdg-'));
    mkdirSync(join(cache, 'hardway'));
    symlinkSync('/nonexistent/hardway-downloads', join(cache, 'hardway/downloads'));
    const run = await download(cache);
    failedCleanly(run, 2, `${join(cache, 'hardway/downloads')} is a symbolic link to /nonexistent/hardway-downloads, which does not exist: hardway keeps its cache there`);
    expect(run.stderr).toContain(`hint: make /nonexistent/hardway-downloads a directory, or remove the link (rm ${join(cache, 'hardway/downloads')}), ${ELSEWHERE}`);
  });

  it('a read-only file system under the cache: exit 1 naming the directory, and what to do', async () => {
    const source = mkdtempSync(join(work, 'xdg-'));
    mkdirSync(join(source, 'hardway/downloads'), { recursive: true });
    const ro = readOnlyView(source);
    mounts.push(ro);
    const run = await download(ro.dir);
    failedCleanly(run, 1, `${join(ro.dir, 'hardway/downloads')}: the file system is read-only: hardway keeps its cache there`);
    expect(run.stderr).toContain(`hint: remount it read-write, ${ELSEWHERE}`);
  });

  it('a file where the directory belongs: exit 2 naming it', async () => {
    const cache = mkdtempSync(join(work, 'xdg-'));
    mkdirSync(join(cache, 'hardway'));
    writeFileSync(join(cache, 'hardway/downloads'), 'not a directory\n');
    const run = await download(cache);
    failedCleanly(run, 2, `${join(cache, 'hardway/downloads')} is a file, not a directory: hardway keeps its cache there`);
  });
});

describe('a build cache directory (issue 34, item 8)', () => {
  const spec = (root: string) => ({
    final: join(root, 'coredns-build/thing-amd64'), work: join(root, 'coredns-build/.work-thing'), what: 'the thing', log: () => {},
    cachedLine: () => 'cached', build: async () => ({ files: {} }),
  });

  it('on a read-only file system: a FailureError naming the directory, not a raw EROFS', async () => {
    const source = mkdtempSync(join(work, 'root-'));
    const ro = readOnlyView(source);
    mounts.push(ro);
    const thrown = await cachedBuild(spec(ro.dir)).catch((e: unknown) => e);
    expect(thrown).toBeInstanceOf(FailureError);
    expect((thrown as Error).message).toBe(`${join(ro.dir, 'coredns-build')}: the file system is read-only: hardway keeps its cache there`);
  });

  it('a link to nothing in its place: an InputError naming it', async () => {
    const root = mkdtempSync(join(work, 'root-'));
    symlinkSync(join(root, 'gone'), join(root, 'coredns-build'));
    const thrown = await cachedBuild(spec(root)).catch((e: unknown) => e);
    expect(thrown).toBeInstanceOf(InputError);
    expect((thrown as Error).message).toBe(`${join(root, 'coredns-build')} is a symbolic link to ${join(root, 'gone')}, which does not exist: hardway keeps its cache there`);
  });
});

describe('a link to nothing further up (issue 34, item 8)', () => {
  it('~/.cache/hardway itself a link to nothing: named, not the downloads directory below it', async () => {
    const cache = mkdtempSync(join(work, 'xdg-'));
    symlinkSync(join(cache, 'moved-away'), join(cache, 'hardway'));
    const run = await download(cache);
    failedCleanly(run, 2, `${join(cache, 'hardway')} is a symbolic link to ${join(cache, 'moved-away')}, which does not exist: hardway keeps its cache there`);
  });
});

describe('the private apt lists of a foreign architecture (issue 34, item 8)', () => {
  it('under a cache root that is a link to nothing: an InputError naming it, before apt-get runs', async () => {
    const root = mkdtempSync(join(work, 'root-'));
    symlinkSync(join(root, 'gone'), join(root, 'apt-lists'));
    // An architecture dpkg does not know here, so its lists are hardway's own.
    const thrown = await aptFor('s390x', join(root, 'apt-lists')).catch((e: unknown) => e);
    expect(thrown).toBeInstanceOf(InputError);
    expect((thrown as Error).message).toBe(`${join(root, 'apt-lists')} is a symbolic link to ${join(root, 'gone')}, which does not exist: hardway keeps its cache there`);
  });
});
