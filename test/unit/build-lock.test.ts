// The lock around a build in hardway's cache (src/download/build-cache.ts), tried with real
// processes: several that want the same build at the same moment take it one after the other,
// never two at once, the later ones saying whom they wait for; a lock whose holder died is taken
// over at once.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { withBuildLock } from '../../src/download/build-cache.ts';

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
