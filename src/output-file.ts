// Writing inside a directory hardway keeps files in (pki/, logs/, backups/, render's --out DIR)
// without ever following a link. The root itself is the path the user chose and is taken as it is;
// below it, each directory on the way is looked at with lstat, and a link or a file where a
// directory belongs is refused, never followed. A file is written to a new temp file beside its
// place (O_EXCL: nothing already there is ever opened) and renamed over it, and a link in its place
// is refused; a mode is changed through a descriptor opened with O_NOFOLLOW. So a link inside the
// root never leads a write, a rename or a chmod out of it. (A link made while hardway runs is not
// guarded against: keep the root writable only by the user who runs hardway; pki/ is 0700.)
import { randomBytes } from 'node:crypto';
import { closeSync, constants, fchmodSync, fstatSync, lstatSync, mkdirSync, openSync, readlinkSync, renameSync, rmSync, statSync, writeFileSync, type Stats } from 'node:fs';
import { basename, dirname, isAbsolute, join } from 'node:path';
import { InputError } from './errors.ts';
import { displayPath, kindOf, pathError } from './input-file.ts';

/** A directory hardway writes into: where it is, and what to tell a user who put a link or a file in its way. */
export interface OutputRoot {
  dir: string;
  /** The hint of the error for a link, or a file where a directory belongs, below the root. */
  hint: string;
  /** Mode of the directories hardway makes below the root (the umask can only narrow it). */
  dirMode: number;
}

/** One file to write: its path relative to the root, its bytes and its exact mode. */
export interface OutputFile {
  path: string;
  content: string | Buffer;
  mode: number;
}

/** Temp files of writeFilesInside: `.` + 12 hex digits + `.tmp`, beside their target. */
export const TEMP_NAME = /^\.[0-9a-f]{12}\.tmp$/;

/** The absolute path of `rel` inside the root; an InputError for a path that would leave it. */
export function insidePath(root: OutputRoot, rel: string): string {
  if (isAbsolute(rel) || rel.split('/').some((p) => p === '' || p === '.' || p === '..')) {
    throw new InputError(`${JSON.stringify(rel.slice(0, 80))} is not a path inside ${displayPath(root.dir)}; nothing was written`, root.hint);
  }
  return join(root.dir, rel);
}

/** What is at a path, without following a link; undefined when nothing is. */
export function lstatOrNothing(path: string): Stats | undefined {
  try {
    return lstatSync(path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw pathError(e, displayPath(path)) ?? e;
  }
}

/** "X is a symbolic link to T" / "X is a file", for refusals. */
export function describeEntry(path: string, st: Stats): string {
  if (!st.isSymbolicLink()) return `${displayPath(path)} is ${kindOf(st)}`;
  let target = '?';
  try {
    target = readlinkSync(path);
  } catch {
    // Unreadable link: named without its target.
  }
  return `${displayPath(path)} is a symbolic link (to ${target})`;
}

/**
 * Checks (and with `create`, makes) the directories from the root down to `relDir`: each one
 * absent (made with `dirMode` when creating) or a real directory. A link, or anything else where a
 * directory belongs, is an InputError naming it. Without `create`, the walk stops at the first
 * absent directory. Returns the absolute path of `relDir`.
 */
export function dirsInside(root: OutputRoot, relDir: string, create: boolean): string {
  if (create) makeRoot(root);
  let path = root.dir;
  const parts = relDir === '.' ? [] : relDir.split('/');
  if (parts.length > 0) insidePath(root, relDir); // refuses a path that would leave the root
  for (const part of parts) {
    path = join(path, part);
    let st = lstatOrNothing(path);
    if (st === undefined) {
      if (!create) return join(root.dir, relDir);
      try {
        mkdirSync(path, { mode: root.dirMode });
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw pathError(e, displayPath(path), root.hint) ?? e;
      }
      st = lstatOrNothing(path);
    }
    if (!st?.isDirectory()) {
      throw new InputError(`${st ? describeEntry(path, st) : displayPath(path)}, not a directory`, root.hint);
    }
  }
  return path;
}

/** Makes the root (and its parents) when absent; anything but a directory there is an InputError. */
function makeRoot(root: OutputRoot): void {
  try {
    mkdirSync(root.dir, { recursive: true, mode: root.dirMode });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw pathError(e, displayPath(root.dir), root.hint) ?? e;
  }
  let st: Stats;
  try {
    st = statSync(root.dir);
  } catch (e) {
    throw pathError(e, displayPath(root.dir), root.hint) ?? e;
  }
  if (!st.isDirectory()) throw new InputError(`${displayPath(root.dir)} is ${kindOf(st)}, not a directory`, root.hint);
}

/** Refuses a link or a directory where a file of the root is to be written. */
function checkFilePlace(root: OutputRoot, file: string): void {
  const st = lstatOrNothing(file);
  if (st?.isDirectory()) throw new InputError(`${describeEntry(file, st)}, not a file`, root.hint);
  if (st?.isSymbolicLink()) throw new InputError(`${describeEntry(file, st)}: hardway never writes through a link; nothing was written`, root.hint);
}

/**
 * Checks that every file could be written without following a link (directories on the way and the
 * file's own place), before anything is written. writeFilesInside does this first itself; a caller
 * that writes in several calls checks them all at once with this.
 */
export function checkFilesInside(root: OutputRoot, paths: readonly string[]): void {
  for (const rel of paths) {
    const file = insidePath(root, rel);
    if (lstatOrNothing(dirsInside(root, dirname(rel), false)) === undefined) continue;
    checkFilePlace(root, file);
  }
}

/**
 * Writes files inside the root, all or none as far as the disk goes: every place is checked first
 * (no link on the way, none in the file's place), then every file is written whole to a temp file
 * beside its place with its exact mode, and only then are they renamed into place in order. A write
 * that fails (no space, a read-only file system) removes the temp files and leaves every file as it
 * was, and the error names the file.
 */
export function writeFilesInside(root: OutputRoot, files: readonly OutputFile[]): void {
  checkFilesInside(root, files.map((f) => f.path));
  const staged: Array<{ tmp: string; file: string }> = [];
  try {
    for (const f of files) {
      const dir = dirsInside(root, dirname(f.path), true);
      const file = insidePath(root, f.path);
      checkFilePlace(root, file);
      const tmp = join(dir, `.${randomBytes(6).toString('hex')}.tmp`);
      staged.push({ tmp, file });
      writeNew(tmp, f.content, f.mode, displayPath(file));
    }
    while (staged.length > 0) {
      const s = staged[0]!;
      try {
        renameSync(s.tmp, s.file);
      } catch (e) {
        throw pathError(e, displayPath(s.file), root.hint) ?? e;
      }
      staged.shift();
    }
  } finally {
    for (const s of staged) rmSync(s.tmp, { force: true });
  }
}

/** Writes one file atomically with its exact mode (temp file beside it, then rename); never through a link in its place. */
export function writeAtomic(file: string, content: string | Buffer, mode: number): void {
  writeFilesInside({ dir: dirname(file), hint: 'move what is there out of the way, then run hardway again', dirMode: 0o755 }, [{ path: basename(file), content, mode }]);
}

/** Creates `path` (never there before: O_EXCL) holding `content` with exactly `mode`. */
function writeNew(path: string, content: string | Buffer, mode: number, shown: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, mode);
    writeFileSync(fd, content);
    fchmodSync(fd, mode); // the umask may have narrowed it; make it exactly what was asked
  } catch (e) {
    if (fd !== undefined) closeSync(fd);
    fd = undefined;
    rmSync(path, { force: true });
    throw pathError(e, shown) ?? e;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * Narrows the mode of a file or directory to `mode` if it grants more, through a descriptor opened
 * without following a link. Returns the mode it had when it changed it, else undefined (also when
 * nothing is there). A link whose target grants more is an InputError: hardway does not change a
 * mode through a link.
 */
export function narrowModeNoFollow(path: string, mode: number, hint: string): number | undefined {
  const st = lstatOrNothing(path);
  if (st === undefined) return undefined;
  if (st.isSymbolicLink()) {
    let target: Stats;
    try {
      target = statSync(path);
    } catch {
      return undefined; // a link to nothing grants nothing
    }
    if ((target.mode & 0o777 & ~mode) === 0) return undefined;
    throw new InputError(
      `${describeEntry(path, st)}, whose target is mode ${octal(target.mode & 0o777)}, must be ${octal(mode)}; hardway does not change a mode through a link`,
      `make it ${octal(mode)} yourself (chmod ${octal(mode).slice(1)} ${readlinkSync(path)}), or replace the link with the file; ${hint}`,
    );
  }
  let fd: number | undefined;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    const current = fstatSync(fd).mode & 0o777;
    if ((current & ~mode) === 0) return undefined;
    fchmodSync(fd, mode);
    return current;
  } catch (e) {
    throw pathError(e, displayPath(path), hint) ?? e;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** A mode as people write it: 0600. */
export function octal(mode: number): string {
  return `0${mode.toString(8).padStart(3, '0')}`;
}
