// hardway's cache directories (downloads/, the builds) are made on first use under
// ${XDG_CACHE_HOME:-~/.cache}/hardway. A link to nothing, a file, or a directory hardway may not
// write there is the user's machine, not a bug: it is said naming the directory and what to do,
// never as an internal error with a stack.
import { constants, type Stats } from 'node:fs';
import { access, lstat, mkdir, readlink, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { FailureError, InputError } from '../errors.ts';
import { displayPath, kindOf, pathError, permissionHint } from '../input-file.ts';

/** What every refusal of a cache directory ends with: the way around it. */
const ELSEWHERE = 'or set XDG_CACHE_HOME to a directory you may write (hardway keeps its cache in $XDG_CACHE_HOME/hardway), then run hardway again';

/** Makes the cache directory `dir` (and its parents) if needed and checks that files can be made in it. */
export async function ensureCacheDir(dir: string): Promise<void> {
  // The nearest entry on the way that exists (dir itself, or the parent to make dir in) must be a
  // directory or a link to one: a link to nothing there would read as ENOENT, a file as ENOTDIR.
  const missing: string[] = [];
  let at = dir;
  let st = await lstat(at).catch(() => undefined);
  while (st === undefined && at !== dirname(at)) {
    missing.unshift(at);
    at = dirname(at);
    st = await lstat(at).catch(() => undefined);
  }
  if (st !== undefined) await mustBeDirectory(at, st);
  try {
    await makeDirs(missing);
    // Root passes a mode check but not a read-only file system; access() sees both.
    await access(dir, constants.W_OK | constants.X_OK);
  } catch (e) {
    throw cacheDirError(e, dir, displayPath(dir));
  }
}

/** A link to nothing, to a file, or a file where the cache's directory (or one on its way) belongs is refused, named. */
async function mustBeDirectory(path: string, st: Stats): Promise<void> {
  const shown = displayPath(path);
  if (st.isSymbolicLink()) {
    const target = await readlink(path).catch(() => '?');
    const to = await stat(path).catch(() => undefined);
    if (to === undefined) {
      throw new InputError(`${shown} is a symbolic link to ${target}, which does not exist: hardway keeps its cache there`,
        `make ${target} a directory, or remove the link (rm ${shown}), ${ELSEWHERE}`);
    }
    if (!to.isDirectory()) {
      throw new InputError(`${shown} is a symbolic link to ${target}, ${kindOf(to)}, not a directory: hardway keeps its cache there`, `remove the link (rm ${shown}), ${ELSEWHERE}`);
    }
  } else if (!st.isDirectory()) {
    throw new InputError(`${shown} is ${kindOf(st)}, not a directory: hardway keeps its cache there`, `move it away, ${ELSEWHERE}`);
  }
}

/**
 * mkdir -p one level at a time (`missing`: outermost first): Node's recursive mkdir reports a
 * read-only file system as ENOENT (its own retry hides the EROFS), so the error named would be wrong.
 */
async function makeDirs(missing: string[]): Promise<void> {
  for (const p of missing) {
    await mkdir(p).catch((e: NodeJS.ErrnoException) => {
      if (e.code !== 'EEXIST') throw e; // made by another process in between
    });
  }
}

/** The error for a cache directory that could not be made or written, naming it and the way around it. */
function cacheDirError(e: unknown, dir: string, shown: string): unknown {
  const err = e as NodeJS.ErrnoException;
  if (err?.code === 'EROFS') return new FailureError(`${shown}: the file system is read-only: hardway keeps its cache there`, `remount it read-write, ${ELSEWHERE}`);
  if (err?.code === 'EACCES' || err?.code === 'EPERM') {
    return new InputError(`${shown}: permission denied: hardway keeps its cache there`, `${permissionHint(err.path ?? dir).replace(/, then run hardway again$/, '')}, ${ELSEWHERE}`);
  }
  return pathError(e, shown, `fix what is at that path, ${ELSEWHERE}`) ?? e;
}
