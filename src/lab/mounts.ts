// Mount points the lab created, found from /proc/self/mountinfo so that `down` and cache cleanup
// undo them even after a crash, deepest first, and never delete a directory that is still mounted.
import { readFileSync } from 'node:fs';
import { local, tryLocal } from '../transport/local.ts';

/** Mount points listed in a mountinfo text (field 5, octal escapes decoded). Pure. */
export function parseMountPoints(mountinfo: string): string[] {
  return mountinfo
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => l.split(' ')[4]!.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8))));
}

/** Mount points at or below `dir`, deepest first. */
export function mountsUnder(dir: string, mountinfo = readFileSync('/proc/self/mountinfo', 'utf8')): string[] {
  const base = dir.replace(/\/+$/, '');
  return parseMountPoints(mountinfo)
    .filter((p) => p === base || p.startsWith(base + '/'))
    .sort((a, b) => b.length - a.length);
}

/** True if something is mounted exactly at `path`. */
export function isMountPoint(path: string): boolean {
  return parseMountPoints(readFileSync('/proc/self/mountinfo', 'utf8')).includes(path.replace(/\/+$/, ''));
}

/** Unmounts everything at or below `dir`, deepest first; a busy mount is detached lazily. */
export async function unmountAll(dir: string): Promise<void> {
  for (let round = 0; round < 5; round++) {
    const points = mountsUnder(dir);
    if (points.length === 0) return;
    for (const p of points) {
      const r = await tryLocal`umount ${p}`;
      if (r.code !== 0 && mountsUnder(p).length > 0) await tryLocal`umount -l ${p}`;
    }
  }
  const left = mountsUnder(dir);
  if (left.length > 0) await local`umount ${left[0]!}`; // reports the command and its stderr
}
