// inventory knows what later commands refuse (issue 36 point 2): a pinned version that download
// cannot fetch (no published digests) or render cannot render is refused by `hardway inventory`
// at its line of cluster.yaml, with the versions that can be used; those pass, and download and
// render take them.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { supportedKubernetes } from '../../src/render/kubernetes-version.ts';
import { selectArtifacts, loadVersions, BUILTIN_VERSIONS_FILE } from '../../src/download/versions.ts';
import { defaultSettings } from '../../src/cluster-settings.ts';
import { runCli } from '../helpers/cli.ts';

const MACHINES = '10.240.0.10 server.kubernetes.local server\n10.240.0.20 node-0.kubernetes.local node-0 10.200.0.0/24\n';

async function inventory(cluster: string, env: NodeJS.ProcessEnv = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'hw-pinned-'));
  writeFileSync(join(dir, 'machines.txt'), MACHINES);
  writeFileSync(join(dir, 'cluster.yaml'), cluster);
  return runCli(['inventory'], dir, env);
}

describe('inventory refuses a version that cannot be downloaded, built or rendered', () => {
  it.each([
    ['kubernetes: v1.35.0', 'cluster.yaml:3: versions.kubernetes v1.35.0 cannot be used: hardway renders files for Kubernetes 1.20 to 1.32 only'],
    ['kubernetes: v1.31.0', 'cluster.yaml:3: versions.kubernetes v1.31.0 cannot be used: hardway has no published checksums for it (src/download/versions.json)'],
    ['etcd: v3.5.99', 'cluster.yaml:3: versions.etcd v3.5.99 cannot be used: hardway has no published checksums for it (src/download/versions.json)'],
  ])('%s: exit 2 at its line, listing what can be used', async (pin, message) => {
    const r = await inventory(`keyAlgorithm: ecdsa-p256\nversions:\n  ${pin}\n`);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(new RegExp(`^error: (\\S+\\/)?${message.replace(/[.()/]/g, "\\$&")}`, "m"));
    expect(r.stderr).toMatch(/hint: use one of: v\d/);
    if (pin.startsWith('kubernetes')) expect(r.stderr).toContain('use one of: v1.32.3, v1.20.2 (v1.20.2: "hardway download --source debian" builds it)');
  });

  it('every version it accepts, render renders and download has digests for (or Debian builds); the defaults pass', async () => {
    expect((await inventory('keyAlgorithm: ecdsa-p256\n')).code).toBe(0);
    for (const v of ['v1.32.3', 'v1.20.2']) {
      expect((await inventory(`versions:\n  kubernetes: ${v}\n`)).code, v).toBe(0);
      expect(supportedKubernetes(v, 'test').version).toBe(v);
    }
    const manifest = loadVersions(BUILTIN_VERSIONS_FILE);
    expect(selectArtifacts(manifest, defaultSettings().versions, 'amd64', BUILTIN_VERSIONS_FILE).length).toBeGreaterThan(5);
  });

  it('another version, given the published digest of each of its release files under checksums: (one architecture is enough)', async () => {
    const url = 'https://github.com/etcd-io/etcd/releases/download/v3.5.22/etcd-v3.5.22-linux-amd64.tar.gz';
    const ok = await inventory(`versions:\n  etcd: v3.5.22\nchecksums:\n  "${url}": sha256:${'a'.repeat(64)}\n`);
    expect(ok.code, ok.stderr).toBe(0);
    // A digest for another URL (here v3.5.21's name) does not make v3.5.22 known.
    const other = await inventory(`versions:\n  etcd: v3.5.22\nchecksums:\n  "${url.replace(/3\.5\.22/g, '3.5.23')}": sha256:${'a'.repeat(64)}\n`);
    expect(other.code).toBe(2);
    expect(other.stderr).toContain('versions.etcd v3.5.22 cannot be used');
    expect(other.stderr).toMatch(/under checksums: in cluster\.yaml/);
    // Kubernetes must still be a release hardway renders.
    const k8s = 'https://dl.k8s.io/release/v1.35.0/bin/linux/amd64/';
    const far = await inventory(`versions:\n  kubernetes: v1.35.0\nchecksums:\n  "${k8s}kubectl": sha256:${'a'.repeat(64)}\n  "${k8s}kubelet": sha256:${'a'.repeat(64)}\n  "https://dl.k8s.io/v1.35.0/kubernetes-server-linux-amd64.tar.gz": sha512:${'b'.repeat(128)}\n`);
    expect(far.code).toBe(2);
    expect(far.stderr).toContain('renders files for Kubernetes 1.20 to 1.32 only');
    // A key that is not a URL, a value that is not a digest: refused at their line.
    expect((await inventory('checksums:\n  etcd.tar.gz: sha256:00\n')).stderr).toMatch(/cluster\.yaml:2: checksums: "etcd\.tar\.gz" is not an https URL/);
    expect((await inventory(`checksums:\n  "${url}": md5:00\n`)).stderr).toMatch(/cluster\.yaml:2: checksums\.https:\S+: expected sha256:<64 hex digits> or sha512:<128 hex digits>/);
  });

  it('a versions manifest of its own (HARDWAY_VERSIONS_FILE) is what is checked against', async () => {
    const r = await inventory('versions:\n  etcd: v3.5.21\n', { HARDWAY_VERSIONS_FILE: '/nonexistent/versions.json' });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('/nonexistent/versions.json');
  });
});
