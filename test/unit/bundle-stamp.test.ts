// bin/hardway.mjs runs the bundle in dist/cli only while it was built from src/ exactly as it is.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { bundleIsCurrent, sourceStamp } from '../../bin/source-stamp.mjs';

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'hardway-stamp-'));
  mkdirSync(join(root, 'src/engine'), { recursive: true });
  writeFileSync(join(root, 'src/cli.ts'), 'export const a = 1;\n');
  writeFileSync(join(root, 'src/engine/run.ts'), 'export const b = 2;\n');
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

const stampBundle = () => {
  mkdirSync(join(root, 'dist/cli'), { recursive: true });
  writeFileSync(join(root, 'dist/cli/stamp.json'), JSON.stringify({ sources: sourceStamp(root) }));
};

describe('the CLI bundle stamp', () => {
  it('is current right after a build and stale after any source edit, addition or removal', () => {
    expect(bundleIsCurrent(root)).toBe(false);
    stampBundle();
    expect(bundleIsCurrent(root)).toBe(true);
    writeFileSync(join(root, 'src/engine/run.ts'), 'export const b = 3;\n');
    expect(bundleIsCurrent(root)).toBe(false);
    stampBundle();
    writeFileSync(join(root, 'src/engine/new.ts'), '');
    expect(bundleIsCurrent(root)).toBe(false);
    stampBundle();
    rmSync(join(root, 'src/cli.ts'));
    expect(bundleIsCurrent(root)).toBe(false);
  });

  it('depends on paths, not only contents', () => {
    const before = sourceStamp(root);
    rmSync(join(root, 'src/cli.ts'));
    writeFileSync(join(root, 'src/main.ts'), 'export const a = 1;\n');
    expect(sourceStamp(root)).not.toBe(before);
  });

  it('the entry point runs the sources through tsx when told to (no build, or an edited source)', () => {
    const bin = new URL('../../bin/hardway.mjs', import.meta.url).pathname;
    const version = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).version;
    const out = execFileSync(process.execPath, [bin, '--version'], { env: { ...process.env, HARDWAY_NO_BUNDLE: '1' }, encoding: 'utf8' });
    expect(out.trim()).toBe(version);
  });
});
