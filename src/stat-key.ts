// What a file is now, as a key for what a process derived from it (a parsed manifest, a digest):
// the same path, size, mtime and ctime mean the same bytes; any write changes the ctime.
import { statSync } from 'node:fs';

/** `path size mtime ctime` of a file, or undefined if it is not there. */
export function statKey(file: string): string | undefined {
  try {
    const st = statSync(file);
    return `${file}\n${st.size}\n${st.mtimeMs}\n${st.ctimeMs}`;
  } catch {
    return undefined;
  }
}
