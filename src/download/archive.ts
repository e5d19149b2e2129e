// Unpacking verified release archives (tar) and Debian packages (dpkg -x) into a staging
// directory, then picking the files each rule names. Only regular files are taken: a symlink or
// device in an archive never becomes a binary in downloads/.
import { lstat, mkdir, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { FailureError } from '../errors.ts';
import { runLocal } from '../transport/local.ts';
import type { FileRule } from './versions.ts';

/** A file taken out of an archive: where it is now (staging) and where it goes (relative to downloads/). */
export interface PickedFile {
  staged: string;
  to: string;
}

const stripDot = (p: string) => p.replace(/^(\.\/)+/, '').replace(/\/+$/, '');

/** Extracts what the rules need from a .tar.gz into `dest`; `label` names the archive in errors. */
export async function extractTar(archive: string, rules: FileRule[], dest: string, label: string, arch: string): Promise<void> {
  await mkdir(dest, { recursive: true });
  if (rules.some((r) => 'fromDir' in r)) {
    // Small archives (the CNI plugins) are unpacked whole; the rules pick from the tree below.
    await runLocal('tar', ['-xzf', archive, '-C', dest, '--no-same-owner']);
    return;
  }
  // Large archives (the Kubernetes server tarball) are listed first so only the wanted members are
  // written, whether the archive spells them "bin/x" or "./bin/x".
  const { stdout } = await runLocal('tar', ['-tzf', archive]);
  const byName = new Map(stdout.split('\n').filter(Boolean).map((m) => [stripDot(m), m] as const));
  const wanted = rules.map((r) => stripDot(('from' in r && r.from ? r.from : '').replaceAll('{arch}', arch)));
  const absent = wanted.filter((w) => !byName.has(w));
  if (absent.length > 0) throw new FailureError(`${label} does not contain ${absent.join(', ')}`, 'the release layout changed: update the "files" of this release in src/download/versions.json');
  await runLocal('tar', ['-xzf', archive, '-C', dest, '--no-same-owner', ...wanted.map((w) => byName.get(w)!)]);
}

/** Unpacks a .deb's files into `dest` (no maintainer scripts run). */
export async function extractDeb(deb: string, dest: string): Promise<void> {
  await mkdir(dest, { recursive: true });
  await runLocal('dpkg', ['-x', deb, dest]);
}

/** Applies the rules to an unpacked tree: each named file (or every executable file of a directory) becomes a PickedFile. */
export async function pickFiles(root: string, rules: FileRule[], label: string, arch: string): Promise<PickedFile[]> {
  const out: PickedFile[] = [];
  for (const rule of rules) {
    if ('fromDir' in rule) {
      const dir = join(root, stripDot(rule.fromDir));
      const names = await readdir(dir).catch(() => {
        throw new FailureError(`${label} has no directory ${rule.fromDir}`);
      });
      for (const name of names.sort()) {
        const st = await lstat(join(dir, name));
        // READMEs and licences ship beside the plugins; only executables are plugins.
        if (st.isFile() && (st.mode & 0o111) !== 0) out.push({ staged: join(dir, name), to: `${rule.toDir}/${name}` });
      }
      if (!out.some((f) => f.to.startsWith(`${rule.toDir}/`))) throw new FailureError(`${label}: no executable files in ${rule.fromDir}`);
    } else {
      const member = stripDot((rule.from ?? '').replaceAll('{arch}', arch));
      const p = join(root, member);
      const st = await lstat(p).catch(() => undefined);
      if (!st?.isFile()) throw new FailureError(`${label} has no regular file ${member}`);
      out.push({ staged: p, to: rule.to });
    }
  }
  return out;
}
