// The facts script's SHA cache over a real shell (dash, the machines' /bin/sh): read once per batch
// and looked up by key, so a long cache costs a worker's no-op little (a search of the whole cache
// text per file grew with the square of its size: 25 files against 175 lines took 19 s of CPU).
import { mkdtempSync, rmSync, statSync, truncateSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createFacts, FAST_HASH_MIN } from '../../src/engine/facts.ts';
import { LocalTransport } from '../../src/transport/local.ts';

const digest = (n: number) => n.toString(16).padStart(64, '0');

describe('facts: the SHA cache', () => {
  const dir = mkdtempSync(join(tmpdir(), 'hw-facts-cache-lookup-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const cacheFile = join(dir, 'sha256.cache');
  const t = new LocalTransport({ machine: 'jumpbox' });
  // Large files (sparse: nothing to write), so the cache is asked for each.
  const files = Array.from({ length: 25 }, (_, i) => {
    const f = join(dir, `bin${i}`);
    writeFileSync(f, '');
    truncateSync(f, FAST_HASH_MIN + i);
    return f;
  });
  const keyOf = (f: string) => {
    const s = statSync(f);
    return `${f}\t${s.size}:${s.ino}:${Math.floor(s.ctimeMs / 1000)}\t`;
  };

  it('answers each file its remembered digest from a long cache, quickly, and no line of the cache is run', async () => {
    const stale = Array.from({ length: 600 }, (_, i) => `/old/bin${i % 25}\t${FAST_HASH_MIN}:${1000 + i}:1700000000\t${digest(9000 + i)}\n`);
    const odd = [
      `${join(dir, 'x')}\t1:$(touch ${join(dir, 'ran')}):2\t${digest(1)}\n`, // not digits: no entry, never evaluated
      `torn line without tabs\n`,
      `${files[3]}\t1:2\t${digest(2)}\n`, // two numbers, not three
    ];
    // A hard link's path beside the file's own: same numbers, the lookup still goes by path.
    const link = `${keyOf(files[0]!).replace(files[0]!, join(dir, 'other-name'))}${digest(7)}\n`;
    const mine = files.map((f, i) => `${keyOf(f)}${digest(i + 1)}\n`);
    // The first line for a key wins (as before): a later duplicate does not change the answer.
    const dup = `${keyOf(files[5]!)}${digest(99)}\n`;
    writeFileSync(cacheFile, [...stale.slice(0, 300), link, ...odd, ...mine, dup, ...stale.slice(300)].join(''));
    const started = Date.now();
    const got = await createFacts(t, () => {}, { cacheFile }).stat(files);
    const took = Date.now() - started;
    files.forEach((f, i) => expect(got.get(f)!.sha256).toBe(digest(i + 1)));
    expect(existsSync(join(dir, 'ran'))).toBe(false);
    // Milliseconds now; the search it replaced took minutes with this cache.
    expect(took).toBeLessThan(4000);
  }, 20_000);

  it('hashes a file the cache has no line for (a stale size, inode or ctime), and finds a digest remembered earlier in the same batch', async () => {
    writeFileSync(cacheFile, `${files[1]}\t${FAST_HASH_MIN + 1}:1:1\t${digest(5)}\n`);
    const facts = createFacts(t, () => {}, { cacheFile, cacheWrites: true });
    const got = await facts.stat([files[1]!]);
    // The real digest of FAST_HASH_MIN + 1 zero bytes, not the stale line's.
    expect(got.get(files[1]!)!.sha256).not.toBe(digest(5));
    expect(got.get(files[1]!)!.sha256).toMatch(/^[0-9a-f]{64}$/);
    facts.remember(files[2]!, digest(42));
    expect((await facts.stat([files[2]!])).get(files[2]!)!.sha256).toBe(digest(42));
  });
});
