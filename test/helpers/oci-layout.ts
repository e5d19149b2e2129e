// Reading OCI image archives back independently (GNU tar, digests from index.json down), for the
// unit tests of the image builder and the end-to-end build from Debian's busybox-static.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { MEDIA_TYPES } from '../../src/images/oci.ts';

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** untar, listing and walkLayout, working in directories under `work`. */
export function layoutHelpers(work: string) {
  /** Every member of a tar by path, through GNU tar (an independent reader). */
  function untar(data: Buffer): string {
    const dir = mkdtempSync(join(work, 'x-'));
    writeFileSync(join(dir, 'archive.tar'), data);
    mkdirSync(join(dir, 'out'));
    execFileSync('tar', ['-xf', join(dir, 'archive.tar'), '-C', join(dir, 'out')]);
    return join(dir, 'out');
  }

  /** `tar -tv` lines (numeric owner, full time) of an archive's bytes. */
  function listing(data: Buffer): string[] {
    const file = join(mkdtempSync(join(work, 'l-')), 'a.tar');
    writeFileSync(file, data);
    return execFileSync('tar', ['-tvf', file, '--numeric-owner', '--full-time'], { encoding: 'utf8', env: { ...process.env, TZ: 'UTC' } }).trim().split('\n');
  }

  /** Follows an OCI layout directory from index.json to its blobs, checking each digest and size. */
  function walkLayout(dir: string) {
    const blob = (d: { digest: string; size: number }) => {
      const data = readFileSync(join(dir, 'blobs', 'sha256', d.digest.replace(/^sha256:/, '')));
      expect(`sha256:${sha(data)}`).toBe(d.digest);
      expect(data.length).toBe(d.size);
      return data;
    };
    expect(JSON.parse(readFileSync(join(dir, 'oci-layout'), 'utf8'))).toEqual({ imageLayoutVersion: '1.0.0' });
    const index = JSON.parse(readFileSync(join(dir, 'index.json'), 'utf8'));
    expect(index.schemaVersion).toBe(2);
    expect(index.mediaType).toBe(MEDIA_TYPES.index);
    expect(index.manifests).toHaveLength(1);
    const entry = index.manifests[0];
    expect(entry.mediaType).toBe(MEDIA_TYPES.manifest);
    const manifest = JSON.parse(blob(entry).toString('utf8'));
    expect(manifest.schemaVersion).toBe(2);
    expect(manifest.mediaType).toBe(MEDIA_TYPES.manifest);
    expect(manifest.config.mediaType).toBe(MEDIA_TYPES.config);
    expect(manifest.layers).toHaveLength(1);
    expect(manifest.layers[0].mediaType).toBe(MEDIA_TYPES.layer);
    const config = JSON.parse(blob(manifest.config).toString('utf8'));
    const layer = blob(manifest.layers[0]);
    // Uncompressed layer: its diff_id is its own digest.
    expect(config.rootfs).toEqual({ type: 'layers', diff_ids: [manifest.layers[0].digest] });
    return { index, entry, manifest, config, layer };
  }
  return { untar, listing, walkLayout };
}
