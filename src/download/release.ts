// `hardway download --source release`: fetch every release file of the pinned versions (or take it
// from the cache), verify its published digest, unpack it and lay the binaries out in downloads/.
import { copyFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Component } from '../cluster-settings.ts';
import { extractTar, pickFiles } from './archive.ts';
import { fetchVerified } from './fetch.ts';
import { dropStaging, installFiles, makeStaging, type InstallSummary, type StagedFile } from './install.ts';
import type { Progress } from './progress.ts';
import { loadVersions, selectArtifacts, withBaseUrl, type Arch, type Artifact } from './versions.ts';

/** Everything a release download needs, passed in (no globals). */
export interface ReleaseOptions {
  projectDir: string;
  arch: Arch;
  versions: Record<Component, string>;
  versionsFile: string;
  /** cluster.yaml's published digests of release files the manifest does not list (URL: digest). */
  checksums?: Record<string, string>;
  /** Mirror or test server that serves HOST/PATH of the real URLs. */
  baseUrl?: string;
  cache: string;
  progress: Progress;
  log: (line: string) => void;
}

/** Downloads, verifies and installs the release binaries; returns what changed in downloads/. */
export async function downloadReleases(opts: ReleaseOptions): Promise<InstallSummary> {
  const artifacts = selectArtifacts(loadVersions(opts.versionsFile), opts.versions, opts.arch, opts.versionsFile, opts.checksums);
  // Every file is fetched and verified before anything is unpacked, so a failed download leaves
  // downloads/ exactly as it was.
  const fetched: { artifact: Artifact; path: string; url: string }[] = [];
  for (const a of artifacts) {
    const url = withBaseUrl(a.url, opts.baseUrl);
    const r = await fetchVerified({ url, algorithm: a.algorithm, hex: a.hex }, opts.cache, opts.progress);
    opts.log(`  ${a.id} ${a.version} (${opts.arch}): ${r.fromCache ? 'cached' : 'downloaded'}, ${a.algorithm} verified`);
    fetched.push({ artifact: a, path: r.path, url });
  }
  const staging = await makeStaging(opts.projectDir);
  try {
    const staged: StagedFile[] = [];
    for (const { artifact: a, path, url } of fetched) {
      const source = { kind: 'release' as const, url, digest: `${a.algorithm}:${a.hex}`, checksumSource: a.checksumSource };
      const base = { component: a.component, version: a.version, source };
      if (a.type === 'binary') {
        const rule = a.files[0] as { to: string };
        const copy = join(staging, `${a.id}.bin`);
        await copyFile(path, copy);
        staged.push({ staged: copy, path: rule.to, ...base });
        continue;
      }
      const dir = join(staging, a.id);
      const label = `${a.id} ${a.version} (${url})`;
      await extractTar(path, a.files, dir, label, opts.arch);
      for (const f of await pickFiles(dir, a.files, label, opts.arch)) staged.push({ staged: f.staged, path: f.to, ...base });
    }
    return await installFiles(opts.projectDir, staged, { source: 'release', arch: opts.arch, missing: [] });
  } finally {
    await dropStaging(staging);
  }
}
