// A hash of every file under src/ (paths and contents): the bundle in dist/cli is used only while
// it matches. Hashing ~100 small files takes a few milliseconds.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** SHA-256 over the relative path and content of each file under ROOT/src, in sorted order. */
export function sourceStamp(root) {
  const src = join(root, 'src');
  const files = readdirSync(src, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath ?? e.path, e.name))
    .sort();
  const h = createHash('sha256');
  for (const f of files) h.update(f.slice(src.length)).update('\0').update(readFileSync(f)).update('\0');
  return h.digest('hex');
}

/** True if ROOT/dist/cli holds a bundle built from ROOT/src exactly as it is now. */
export function bundleIsCurrent(root) {
  try {
    return JSON.parse(readFileSync(join(root, 'dist/cli/stamp.json'), 'utf8')).sources === sourceStamp(root);
  } catch {
    return false;
  }
}
