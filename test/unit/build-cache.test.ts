// Builds kept in hardway's cache (src/download/build-cache.ts): built once, then taken from the
// cache; a failed build leaves nothing a rerun would trust. The lock around a build, tried with
// real processes: several that want the same build at the same moment take it one after the
// other, never two at once, the later ones saying whom they wait for; a lock whose holder died is
// taken over at once.
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cachedBuild, withBuildLock, type BuiltFiles } from '../../src/download/build-cache.ts';
import { InputError } from '../../src/errors.ts';

const REPO = resolve(import.meta.dirname, '../..');
const HOLDER = join(REPO, 'test/fixtures/build-lock-holder.ts');
const work = mkdtempSync(join(tmpdir(), 'hardway-build-lock-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** Runs the holder in a node process of its own: ready once it printed "ready"; done with all it printed. */
function holder(lockFile: string, holdMs: number, goFile: string): { ready: Promise<void>; done: Promise<string> } {
  const child = spawn(process.execPath, ['--import', 'tsx', HOLDER, lockFile, String(holdMs), goFile], { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  let isReady: () => void = () => {};
  const ready = new Promise<void>((r) => (isReady = r));
  child.stdout.on('data', (d) => {
    out += d;
    if (out.startsWith('ready\n')) isReady();
  });
  child.stderr.on('data', (d) => (err += d));
  const done = new Promise<string>((r, j) => child.on('close', (code) => (code === 0 ? r(out) : j(new Error(`holder exit ${code}: ${err}`)))));
  return { ready, done };
}

describe('build lock', () => {
  it('three processes wanting the same build at the same moment hold it one at a time; the two that wait say so', async () => {
    const lockFile = join(work, 'same-inputs.lock');
    const go = join(work, 'go');
    const holders = [0, 1, 2].map(() => holder(lockFile, 400, go));
    await Promise.all(holders.map((h) => h.ready));
    writeFileSync(go, ''); // all three try from now on
    const outs = await Promise.all(holders.map((h) => h.done));
    const held = outs.map((o) => JSON.parse(o.trim().split('\n').at(-1)!) as { pid: number; took: number; released: number }).sort((a, b) => a.took - b.took);
    for (let i = 1; i < held.length; i++) expect(held[i]!.took).toBeGreaterThanOrEqual(held[i - 1]!.released);
    const waited = outs.filter((o) => /waiting for another hardway process \(pid \d+, since \S+\) that is building the test build from the same inputs/.test(o));
    expect(waited).toHaveLength(2);
    expect(existsSync(lockFile)).toBe(false); // the last one released it
  }, 30_000);

  it('a lock left by a process that died is taken over without waiting', async () => {
    const lockFile = join(work, 'dead.lock');
    const dead = spawnSync(process.execPath, ['-e', '0']).pid!;
    writeFileSync(lockFile, JSON.stringify({ pid: dead, host: hostname(), command: 'the test build', started: '2020-01-01T00:00:00.000Z' }) + '\n');
    const said: string[] = [];
    const t = Date.now();
    expect(await withBuildLock(lockFile, 'the test build', (l) => said.push(l), async () => 'built')).toBe('built');
    expect(Date.now() - t).toBeLessThan(1000);
    expect(said).toEqual([]);
    expect(existsSync(lockFile)).toBe(false);
  });
});

describe('cached build', () => {
  interface Rec extends BuiltFiles { key: string }
  const spec = (root: string, key: string, said: string[], build: (work: string, out: string) => Promise<Rec>) => ({
    final: join(root, 'thing-amd64'), work: join(root, '.work-thing'), what: 'the thing', log: (l: string) => said.push(l),
    accept: (r: Rec) => r.key === key, cachedLine: (r: Rec) => `thing ${r.key}: cached`, build,
  });
  const makeThing = (key: string, calls: string[]) => async (work: string, out: string): Promise<Rec> => {
    calls.push(work);
    writeFileSync(join(out, 'thing'), `built ${key}`);
    return { key, files: { thing: { sha256: createHash('sha256').update(`built ${key}`).digest('hex'), size: `built ${key}`.length } } };
  };

  it('builds once into place with its record, then takes it from the cache; another key builds again; no work or lock left', async () => {
    const root = mkdtempSync(join(work, 'cache-'));
    const calls: string[] = [];
    const said: string[] = [];
    expect((await cachedBuild(spec(root, 'k1', said, makeThing('k1', calls)))).key).toBe('k1');
    expect(readFileSync(join(root, 'thing-amd64/thing'), 'utf8')).toBe('built k1');
    expect(JSON.parse(readFileSync(join(root, 'thing-amd64/build.json'), 'utf8')).key).toBe('k1');
    expect((await cachedBuild(spec(root, 'k1', said, makeThing('k1', calls)))).key).toBe('k1');
    expect(calls).toHaveLength(1);
    expect(said).toEqual(['thing k1: cached']);
    await cachedBuild(spec(root, 'k2', said, makeThing('k2', calls)));
    expect(calls).toHaveLength(2);
    expect(readdirSync(root)).toEqual(['thing-amd64']);
  });

  it('a file of the build changed in size: not trusted, built again', async () => {
    const root = mkdtempSync(join(work, 'cache-'));
    const calls: string[] = [];
    await cachedBuild(spec(root, 'k1', [], makeThing('k1', calls)));
    writeFileSync(join(root, 'thing-amd64/thing'), 'cut');
    await cachedBuild(spec(root, 'k1', [], makeThing('k1', calls)));
    expect(calls).toHaveLength(2);
    expect(readFileSync(join(root, 'thing-amd64/thing'), 'utf8')).toBe('built k1');
  });

  it('a file of the build replaced by other bytes of the same size (issue 34, item 7): not trusted, built again', async () => {
    const root = mkdtempSync(join(work, 'cache-'));
    const calls: string[] = [];
    const said: string[] = [];
    await cachedBuild(spec(root, 'k1', said, makeThing('k1', calls)));
    writeFileSync(join(root, 'thing-amd64/thing'), 'evil k1!'); // as long as 'built k1'
    expect((await cachedBuild(spec(root, 'k1', said, makeThing('k1', calls)))).key).toBe('k1');
    expect(calls).toHaveLength(2);
    expect(said).toEqual([]); // never said to be cached
    expect(readFileSync(join(root, 'thing-amd64/thing'), 'utf8')).toBe('built k1');
  });

  it('a record whose SHA-256 does not match its file is not trusted, though every size matches', async () => {
    const root = mkdtempSync(join(work, 'cache-'));
    const calls: string[] = [];
    await cachedBuild(spec(root, 'k1', [], makeThing('k1', calls)));
    const recordFile = join(root, 'thing-amd64/build.json');
    const record = JSON.parse(readFileSync(recordFile, 'utf8'));
    record.files.thing.sha256 = '0'.repeat(64);
    writeFileSync(recordFile, JSON.stringify(record));
    await cachedBuild(spec(root, 'k1', [], makeThing('k1', calls)));
    expect(calls).toHaveLength(2);
    expect(JSON.parse(readFileSync(recordFile, 'utf8')).files.thing.sha256).toBe(createHash('sha256').update('built k1').digest('hex'));
  });

  it('a directory at the build lock\'s place is refused naming that lock file, not the project\'s .hardway.lock (issue 34, item 8)', async () => {
    const root = mkdtempSync(join(work, 'cache-'));
    mkdirSync(join(root, 'thing-amd64.lock'));
    const thrown = await cachedBuild(spec(root, 'k1', [], makeThing('k1', []))).catch((e: unknown) => e);
    expect(thrown).toBeInstanceOf(InputError);
    expect((thrown as Error).message).toBe(`${join(root, 'thing-amd64.lock')} is a directory, not a lock hardway made (it makes thing-amd64.lock as a file of its own)`);
    expect((thrown as InputError).hint).toContain(`rm ${join(root, 'thing-amd64.lock')}`);
  });

  it('a failed build leaves nothing: no build directory, no work directory, no lock', async () => {
    const root = mkdtempSync(join(work, 'cache-'));
    const failing = async (_w: string, out: string): Promise<Rec> => {
      writeFileSync(join(out, 'thing'), 'half');
      throw new Error('compiler said no');
    };
    await expect(cachedBuild(spec(root, 'k1', [], failing))).rejects.toThrow('compiler said no');
    expect(readdirSync(root)).toEqual([]);
  });
});
