// The facts script's SHA-256 of large files over a real shell: openssl where it answers the known
// digest, sha256sum otherwise (no openssl, or one that answers wrong); the same digest every way.
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createFacts, FAST_HASH_MIN } from '../../src/engine/facts.ts';
import { joinCommands, sh, type Command } from '../../src/shell.ts';
import { LocalTransport } from '../../src/transport/local.ts';
import type { Transport } from '../../src/transport/types.ts';

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** The local transport with PATH set to `bin` only (so a test decides which tools exist). */
function withPath(bin: string): Transport {
  const t = new LocalTransport({ machine: 'jumpbox' });
  return {
    machine: t.machine,
    exec: (cmd: Command, opts) => t.exec(joinCommands([sh`PATH=${bin}`, cmd], '\n'), opts),
    upload: t.upload.bind(t),
    close: t.close.bind(t),
  };
}

/** A bin directory with the tools the facts script needs, and `extra` scripts (name -> body). */
function binDir(root: string, extra: Record<string, string> = {}, openssl = false): string {
  const bin = join(root, `bin-${Object.keys(extra).join('-') || 'plain'}-${openssl}`);
  mkdirSync(bin);
  const tools = ['sh', 'stat', 'sha256sum', 'base64', 'printf', 'cat', ...(openssl ? ['openssl'] : [])];
  for (const tool of tools) symlinkSync(`/usr/bin/${tool}`, join(bin, tool));
  for (const [name, body] of Object.entries(extra)) {
    // Never write through a tool's symlink: that would replace the real /usr/bin tool.
    rmSync(join(bin, name), { force: true });
    writeFileSync(join(bin, name), `#!/bin/sh\n${body}\n`);
    chmodSync(join(bin, name), 0o755);
  }
  return bin;
}

describe('facts: SHA-256 of large files', () => {
  const root = mkdtempSync(join(tmpdir(), 'hw-facts-hash-'));
  const big = Buffer.alloc(FAST_HASH_MIN + 12345, 7);
  big.write('hardway', 1000);
  const small = Buffer.from('small file\n');
  writeFileSync(join(root, 'big'), big);
  writeFileSync(join(root, 'small'), small);

  const statBoth = async (t: Transport) => {
    const m = await createFacts(t).stat([join(root, 'big'), join(root, 'small')]);
    return [m.get(join(root, 'big'))!.sha256, m.get(join(root, 'small'))!.sha256];
  };

  it('is right with openssl (this host has it)', async () => {
    expect(await statBoth(withPath(binDir(root, {}, true)))).toEqual([sha(big), sha(small)]);
  });

  it('is right without openssl (sha256sum only)', async () => {
    expect(await statBoth(withPath(binDir(root)))).toEqual([sha(big), sha(small)]);
  });

  it('ignores an openssl that answers a wrong digest', async () => {
    const liar = binDir(root, { openssl: 'cat >/dev/null; echo 0000000000000000000000000000000000000000000000000000000000000000 "*stdin"' });
    expect(await statBoth(withPath(liar))).toEqual([sha(big), sha(small)]);
  });

  it('uses openssl for large files only', async () => {
    // An openssl that is right for "abc" but marks every other answer: shows which files it hashed.
    const marker = binDir(root, {
      openssl: `d=$(/usr/bin/openssl dgst -sha256 -r); [ "\${d%% *}" = ${sha(Buffer.from('abc'))} ] && echo "$d" || echo "feed$(echo "$d" | cut -c5-)"`,
      cut: 'exec /usr/bin/cut "$@"',
    });
    const [b, s] = await statBoth(withPath(marker));
    expect(b).toBe('feed' + sha(big).slice(4));
    expect(s).toBe(sha(small));
  });

  it('remembers large files\' digests by path, size, inode and ctime: a rerun reads the cache, a changed file is hashed again', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hw-facts-cache-'));
    const file = join(dir, 'bin');
    const cacheFile = join(dir, 'state', 'sha256.cache');
    writeFileSync(file, big);
    const t = new LocalTransport({ machine: 'jumpbox' });
    const stat = async (cacheWrites: boolean) => (await createFacts(t, () => {}, { cacheWrites, cacheFile }).stat([file])).get(file)!.sha256;

    expect(await stat(false)).toBe(sha(big));
    expect(existsSync(cacheFile)).toBe(false); // --dry-run writes nothing on the machine
    expect(await stat(true)).toBe(sha(big));
    const line = readFileSync(cacheFile, 'utf8');
    expect(line).toBe(`${file}\t${big.length}:${statSync(file).ino}:${Math.floor(statSync(file).ctimeMs / 1000)}\t${sha(big)}\n`);
    // The remembered digest is what a rerun answers (planted: proves no re-hash).
    writeFileSync(cacheFile, line.replace(sha(big), 'ab'.repeat(32)));
    expect(await stat(true)).toBe('ab'.repeat(32));
    // A rewrite (new ctime) is a different key: hashed again and remembered.
    await new Promise((r) => setTimeout(r, 1100));
    writeFileSync(file, Buffer.concat([big, Buffer.from('x')]));
    expect(await stat(true)).toBe(sha(Buffer.concat([big, Buffer.from('x')])));
    expect(readFileSync(cacheFile, 'utf8').trim().split('\n')).toHaveLength(2);
    rmSync(dir, { recursive: true, force: true });
  });

  it('asks stat and sha256sum once per batch however many small files it holds, names with a backslash included', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hw-facts-batch-'));
    const count = join(dir, 'calls');
    const names = ['a', 'b c', 'back\\slash', 'd'];
    for (const n of names) writeFileSync(join(dir, n), `content of ${n}\n`);
    const bin = binDir(dir, {
      stat: `echo stat >> ${count}; exec /usr/bin/stat "$@"`,
      sha256sum: `echo sha256sum >> ${count}; exec /usr/bin/sha256sum "$@"`,
    });
    const paths = [...names, 'a'].map((n) => join(dir, n));
    const got = await createFacts(withPath(bin)).stat([...paths, join(dir, 'missing')]);
    for (const n of names) expect(got.get(join(dir, n))!.sha256).toBe(sha(Buffer.from(`content of ${n}\n`)));
    expect(got.get(join(dir, 'missing'))!.exists).toBe(false);
    expect(readFileSync(count, 'utf8').trim().split('\n').sort()).toEqual(['sha256sum', 'stat']);
    rmSync(dir, { recursive: true, force: true });
  });

  it('records a digest it is told to remember (a file just uploaded) with the next batch, and the batch answers only what it asked', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hw-facts-remember-'));
    const file = join(dir, 'bin');
    const cacheFile = join(dir, 'sha256.cache');
    writeFileSync(file, big);
    const t = new LocalTransport({ machine: 'jumpbox' });
    const told = 'cd'.repeat(32); // not the real digest: shows the remembered one is what the next lookup answers
    const dry = createFacts(t, () => {}, { cacheFile });
    dry.remember(file, told);
    expect((await dry.stat([file])).get(file)!.sha256).toBe(sha(big)); // --dry-run records nothing
    const facts = createFacts(t, () => {}, { cacheWrites: true, cacheFile });
    facts.remember(file, told);
    const answers = await facts.stat([file, join(dir, 'missing')]);
    expect([...answers.keys()]).toEqual([file, join(dir, 'missing')]);
    expect(answers.get(file)!.sha256).toBe(told);
    expect(() => facts.remember(file, 'not-a-digest')).not.toThrow();
    await expect(facts.stat([file])).rejects.toThrow(/not a SHA-256/);
    rmSync(dir, { recursive: true, force: true });
  });
});
