// Two labs starting at once both find /run/systemd/nspawn unmounted: under the one file lock
// (lock.ts withFileLock) only the first mounts it, the second finds its mount.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ensureNspawnRuntime, type NspawnRuntimeDeps } from '../../src/lab/boot.ts';

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

describe('the nspawn runtime mount', () => {
  it('two starts at the same moment mount it once, holding the file lock one at a time; no lock is left', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hardway-nspawn-'));
    dirs.push(dir);
    let mounted = false;
    const mounts: string[] = [];
    const deps: NspawnRuntimeDeps = {
      lockFile: join(dir, 'runtime.lock'),
      isMounted: () => mounted,
      pollMs: 10,
      mount: async () => {
        mounts.push(existsSync(join(dir, 'runtime.lock')) ? 'locked' : 'unlocked');
        await new Promise((r) => setTimeout(r, 100));
        mounted = true;
      },
    };
    await Promise.all([ensureNspawnRuntime(deps), ensureNspawnRuntime(deps)]);
    expect(mounts).toEqual(['locked']);
    expect(existsSync(deps.lockFile)).toBe(false);
    // Mounted already: nothing to lock.
    await ensureNspawnRuntime(deps);
    expect(mounts).toHaveLength(1);
  });
});
