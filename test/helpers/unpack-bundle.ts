// A support bundle (doctor --bundle) unpacked with the real tar, for tests that search what is in it.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Every file of the bundle at `file`, by its path inside the archive, as text. */
export function unpackBundle(file: string): Map<string, string> {
  const out = mkdtempSync(join(tmpdir(), 'hardway-bundle-'));
  try {
    execFileSync('tar', ['-xzf', file, '-C', out]);
    const files = new Map<string, string>();
    const walk = (d: string) => {
      for (const n of readdirSync(d)) {
        const p = join(d, n);
        if (statSync(p).isDirectory()) walk(p);
        else files.set(p.slice(out.length + 1), readFileSync(p, 'utf8'));
      }
    };
    walk(out);
    return files;
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}
