// What a file is now, as a key for what a process derived from it (a parsed manifest, a digest):
// the same path, size, mtime and ctime mean the same bytes; any write changes the ctime.
import { statSync, type Stats } from 'node:fs';

/** `path size mtime ctime` of a file, or undefined if it is not there. */
export function statKey(file: string): string | undefined {
  try {
    return statKeyOf(file, statSync(file));
  } catch {
    return undefined;
  }
}

/** statKey from a stat the caller already made (one stat call, not two). */
export function statKeyOf(file: string, st: Pick<Stats, 'size' | 'mtimeMs' | 'ctimeMs'>): string {
  return `${file}\n${st.size}\n${st.mtimeMs}\n${st.ctimeMs}`;
}
