// What a process derives from a file (a parsed downloads/manifest.json) is reused only while the
// file is as it was: a rewrite is read again, even with the same size in the same millisecond.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { downloadsManifestPath, readDownloads } from '../../src/download/layout.ts';
import { statKey } from '../../src/stat-key.ts';

const manifest = (arch: string) => JSON.stringify({ schema: 1, source: 'debian', arch, files: [], missing: [] });

describe('statKey and the manifest read once per process', () => {
  it('changes with every write of the file and is undefined for a missing one', () => {
    const dir = mkdtempSync(join(tmpdir(), 'stat-key-'));
    const f = join(dir, 'x');
    expect(statKey(f)).toBeUndefined();
    writeFileSync(f, 'aaaa');
    const first = statKey(f);
    expect(statKey(f)).toBe(first);
    writeFileSync(f, 'bbbb');
    expect(statKey(f)).not.toBe(first);
  });

  it('readDownloads returns the parsed manifest until the file is rewritten, then the new one', () => {
    const dir = mkdtempSync(join(tmpdir(), 'stat-key-project-'));
    const file = downloadsManifestPath(dir);
    mkdirSync(join(file, '..'), { recursive: true });
    writeFileSync(file, manifest('amd64'));
    const a = readDownloads(dir);
    expect(a?.arch).toBe('amd64');
    expect(readDownloads(dir)).toBe(a);
    // Same length, written right after: still read again.
    writeFileSync(file, manifest('arm64'));
    expect(readDownloads(dir)?.arch).toBe('arm64');
    rmSync(file);
    expect(readDownloads(dir)).toBeUndefined();
  });
});
