// Every user of hardway's cache (the downloads, the builds, the lab's roots) finds it in one place,
// and a relative XDG_CACHE_HOME is ignored, as the XDG spec says, by all of them alike.
import { describe, expect, it } from 'vitest';
import { cacheDir, cacheRoot } from '../../src/download/cache.ts';
import { defaultLabPaths } from '../../src/lab/names.ts';

describe('hardway cache root', () => {
  it('is $XDG_CACHE_HOME/hardway for downloads and the lab alike', () => {
    const env = { HOME: '/home/u', XDG_CACHE_HOME: '/var/cache/u' };
    expect(cacheRoot(env)).toBe('/var/cache/u/hardway');
    expect(cacheDir(env)).toBe('/var/cache/u/hardway/downloads');
    expect(defaultLabPaths(env).cacheRoot).toBe('/var/cache/u/hardway');
  });

  it('ignores a relative XDG_CACHE_HOME in both, falling back to $HOME/.cache', () => {
    const env = { HOME: '/home/u', XDG_CACHE_HOME: 'cache' };
    expect(cacheDir(env)).toBe('/home/u/.cache/hardway/downloads');
    expect(defaultLabPaths(env).cacheRoot).toBe('/home/u/.cache/hardway');
  });
});
