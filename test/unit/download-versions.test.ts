// The shipped versions manifest: it covers the default pinned versions for both architectures, every
// digest names the commit of the file it was copied from, and the base-URL override keeps host and path.
import { describe, expect, it } from 'vitest';
import { defaultSettings } from '../../src/cluster-settings.ts';
import { BINARY_DIRS } from '../../src/download/layout.ts';
import { ARCHES, BUILTIN_VERSIONS_FILE, loadVersions, selectArtifacts, withBaseUrl } from '../../src/download/versions.ts';

describe('src/download/versions.json', () => {
  const manifest = loadVersions(BUILTIN_VERSIONS_FILE);

  it.each(ARCHES)('has a verified release file for every default version on %s, and installs every named binary', (arch) => {
    const artifacts = selectArtifacts(manifest, defaultSettings().versions, arch, BUILTIN_VERSIONS_FILE);
    const targets = artifacts.flatMap((a) => a.files.map((f) => ('to' in f ? f.to : `${f.toDir}/*`)));
    for (const [name, dir] of Object.entries(BINARY_DIRS)) expect(targets, name).toContain(`${dir}/${name}`);
    expect(targets).toContain('cni-plugins/*');
    for (const a of artifacts) {
      expect(a.url, a.id).toMatch(/^https:\/\//);
      expect(a.url, a.id).toContain(arch);
      expect(a.hex, a.id).toMatch(a.algorithm === 'sha256' ? /^[0-9a-f]{64}$/ : /^[0-9a-f]{128}$/);
      // Where the digest was copied from: a repository at a fixed commit and a file in it.
      expect(a.checksumSource, a.id).toMatch(/^[a-z0-9.-]+: [\w-]+\/[\w-]+@[0-9a-f]{40} \S+/);
    }
  });

  it('has no digest twice (a copy-paste slip would repeat one)', () => {
    const all = Object.values(manifest.components).flatMap((v) => Object.values(v ?? {}).flat().flatMap((a) => Object.values(a.arch).map((f) => f!.digest)));
    expect(new Set(all).size).toBe(all.length);
  });

  it('serves URLs from a mirror as BASE/HOST/PATH', () => {
    expect(withBaseUrl('https://dl.k8s.io/release/v1.32.3/bin/linux/amd64/kubectl', 'http://127.0.0.1:8080/')).toBe(
      'http://127.0.0.1:8080/dl.k8s.io/release/v1.32.3/bin/linux/amd64/kubectl',
    );
    expect(withBaseUrl('https://dl.k8s.io/x', undefined)).toBe('https://dl.k8s.io/x');
  });
});
