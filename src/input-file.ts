// The files a user gives hardway (machines.txt, cluster.yaml, pki/ and what is in it): a path that
// is a directory where a file belongs, a link to nothing, or unreadable is an input error naming
// the path and what is wrong with it, never a stack trace. Also the one translation of a
// file-system error (no space, read-only, a file in a directory's place) into a message (pathError).
import { closeSync, constants, fstatSync, lstatSync, openSync, readFileSync, readlinkSync, readSync, statSync, type Stats } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import { FailureError, InputError, type Location } from './errors.ts';

/** What a file-system error code means for the path it names, as a user reads it: the user's to fix (exit 2). */
const PROBLEMS: Record<string, string> = {
  EISDIR: 'a directory where a file belongs',
  ENOTDIR: 'a part of this path is a file where a directory belongs',
  EEXIST: 'something is already there (a file where a directory belongs, or a link)',
  ELOOP: 'too many levels of symbolic links (or a link where hardway does not follow one)',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  ENAMETOOLONG: 'the path is too long',
};

/** File-system errors of the machine rather than of the path (exit 1), each with what to do. */
const FAILURES: Record<string, [string, string]> = {
  ENOSPC: ['no space left on the device', 'free some space on that file system (df -h shows it), then run hardway again'],
  EDQUOT: ['disk quota exceeded', 'free some space within your quota, then run hardway again'],
  EROFS: ['the file system is read-only', 'run hardway where it can write (a project directory on a writable file system), or remount it read-write'],
  EIO: ['input/output error', 'check the disk (dmesg shows why), then run hardway again'],
  EMFILE: ['too many open files', 'raise the limit (ulimit -n), then run hardway again'],
};

/** The text of a file, or undefined when nothing is at that path; anything but a readable file is an InputError. */
export function readInputFile(file: string, shown: string, hint: string): string | undefined {
  // A regular file of bounded size, as every file the user names: machines.txt of thousands of machines is far below.
  if (namedFile(shown, file, hint, undefined, INPUT_FILE_MAX_BYTES) === undefined) return undefined;
  return readNamedFile(shown, file, hint, undefined, INPUT_FILE_MAX_BYTES).toString('utf8');
}

/** The most hardway reads of machines.txt, cluster.yaml or a file of pki/. */
const INPUT_FILE_MAX_BYTES = 16 * 1024 * 1024;

/** The most hardway reads of a file the user names (a CA bundle, a key, an ssh config): far more than any real one. */
export const NAMED_FILE_MAX_BYTES = 1024 * 1024;

/**
 * The one check of a file the user names (cluster.yaml's ssh.*, dns.source and registry CAs, -i):
 * a regular file of at most `maxBytes`. A named pipe, a device (/dev/zero), a directory or a
 * socket is refused by its stat, before any open that could block or read without end. Undefined
 * when nothing is there (the caller says whether that is fine); each refusal is an InputError
 * "SUBJECT is ..." at `where` (cluster.yaml and its line), `subject` naming the setting and path.
 */
export function namedFile(subject: string, path: string, hint: string, where?: Location, maxBytes = NAMED_FILE_MAX_BYTES): Stats | undefined {
  let st: Stats | undefined;
  try {
    st = statPath(path, path, hint);
  } catch (e) {
    // statPath names the path (a link to nothing): add the line of the setting.
    if (e instanceof InputError && !e.where && where) throw new InputError(e.message, e.hint, where);
    throw e;
  }
  if (st === undefined) return undefined;
  if (!st.isFile()) throw new InputError(`${subject} is ${kindOf(st)}, not a file`, hint, where);
  if (st.size > maxBytes) throw new InputError(`${subject} is ${byteSize(st.size)}, more than the ${byteSize(maxBytes)} hardway reads of such a file`, hint, where);
  return st;
}

/**
 * Reads a file that namedFile accepts (nothing there: "SUBJECT does not exist"). It is opened
 * without blocking and checked again on the descriptor (a pipe put in its place after the check
 * is refused too), and never more than `maxBytes` are read (a file that grew meanwhile is refused).
 */
export function readNamedFile(subject: string, path: string, hint: string, where?: Location, maxBytes = NAMED_FILE_MAX_BYTES): Buffer {
  if (namedFile(subject, path, hint, where, maxBytes) === undefined) throw new InputError(`${subject} does not exist`, hint, where);
  const fd = namingPath(subject, () => openSync(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY), hint);
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw new InputError(`${subject} is ${kindOf(st)}, not a file`, hint, where);
    const buf = Buffer.alloc(Math.min(st.size, maxBytes) + 1);
    let got = 0;
    for (let n = 1; n > 0 && got < buf.length; got += n) n = namingPath(subject, () => readSync(fd, buf, got, buf.length - got, null), hint);
    if (got > maxBytes) throw new InputError(`${subject} is more than the ${byteSize(maxBytes)} hardway reads of such a file`, hint, where);
    return buf.subarray(0, got);
  } finally {
    closeSync(fd);
  }
}

/** A size as messages give it: bytes, KiB, MiB or GiB. */
export function byteSize(n: number): string {
  if (n < 1024) return `${n} bytes`;
  const [value, unit] = n < 1024 ** 2 ? [n / 1024, 'KiB'] : n < 1024 ** 3 ? [n / 1024 ** 2, 'MiB'] : [n / 1024 ** 3, 'GiB'];
  return `${Math.round(value * 10) / 10} ${unit}`;
}

/** What is at a path (links followed), or undefined when nothing is; a link to nothing is an InputError. */
export function statPath(file: string, shown: string, hint: string): Stats | undefined {
  try {
    return statSync(file);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOTDIR') {
      const culprit = notADirectoryOn(file);
      if (culprit) throw new InputError(`${displayPath(culprit.path)} is ${kindOf(culprit.stats)}, not a directory`, hint);
    }
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw pathError(e, shown, hint) ?? e;
    let link: Stats | undefined;
    try {
      link = lstatSync(file);
    } catch {
      return undefined;
    }
    if (link.isSymbolicLink()) throw new InputError(`${shown} is a symbolic link to ${readlinkSync(file)}, which does not exist`, hint);
    return undefined;
  }
}

/** A directory that hardway keeps files in: absent is fine, anything but a directory is an InputError. */
export function checkDirectory(dir: string, shown: string, hint: string): void {
  const st = statPath(dir, shown, hint);
  if (st !== undefined && !st.isDirectory()) throw new InputError(`${shown} is ${kindOf(st)}, not a directory`, hint);
}

/** A path as the user should see it in messages: relative to the working directory when inside it. */
export function displayPath(file: string): string {
  const rel = relative(process.cwd(), file);
  return rel && !rel.startsWith('..') ? rel : file;
}

/** The first directory on the way to `file` that is something else (for ENOTDIR). */
function notADirectoryOn(file: string): { path: string; stats: Stats } | undefined {
  const chain: string[] = [];
  for (let p = dirname(file); p !== dirname(p); p = dirname(p)) chain.unshift(p);
  for (const path of chain) {
    try {
      const stats = statSync(path);
      if (!stats.isDirectory()) return { path, stats };
    } catch {
      return undefined;
    }
  }
  return undefined;
}

/** What a thing on disk is, for "X is a directory, not a file". */
export function kindOf(st: Stats): string {
  if (st.isDirectory()) return 'a directory';
  if (st.isFile()) return 'a file';
  if (st.isFIFO()) return 'a named pipe';
  if (st.isSocket()) return 'a socket';
  if (st.isCharacterDevice() || st.isBlockDevice()) return 'a device';
  return 'something else';
}

/**
 * A file-system error as the error hardway reports, naming the path (`shown`, else the error's
 * own): one about the path (a directory where a file belongs, a file where a directory does, a link
 * loop, no permission) is an InputError (exit 2); one about the machine (no space, a read-only file
 * system) a FailureError (exit 1), named even without a path. Undefined for any other error.
 */
export function pathError(e: unknown, shown?: string, hint?: string): InputError | FailureError | undefined {
  if (e instanceof InputError || e instanceof FailureError) return e;
  const err = e as NodeJS.ErrnoException;
  const code = typeof err?.code === 'string' ? err.code : undefined;
  const path = shown ?? err?.path;
  const failure = code ? FAILURES[code] : undefined;
  if (failure) return new FailureError(`${path ? `${path}: ` : ''}${failure[0]} (${code}${err.syscall ? ` on ${err.syscall}` : ''})`, failure[1]);
  const problem = code ? PROBLEMS[code] : undefined;
  if (!problem || !path) return undefined;
  // No permission is about who runs hardway, never about what is at the path: moving pki/ away
  // would make hardway issue a new CA.
  if (code === 'EACCES' || code === 'EPERM') return new InputError(`${path}: ${problem}`, permissionHint(err.path ?? path));
  return new InputError(`${path}: ${problem}`, hint ?? 'fix or move away what is at that path, then run hardway again');
}

/** What to do about a path this user may not read or write: run as its owner, or as root. */
export function permissionHint(path: string, uid: number = process.getuid?.() ?? -1): string {
  // The path itself if it is there, else the directory it would be made in.
  const lstat = (p: string) => {
    try {
      return lstatSync(p);
    } catch {
      return undefined;
    }
  };
  let at = resolve(path);
  let st = lstat(at);
  while (!st && at !== dirname(at)) st = lstat((at = dirname(at)));
  if (!st) return 'run hardway as a user who may write there, or as root';
  const owner = userName(st.uid);
  if (st.uid === uid) return `${displayPath(at)} belongs to you (${owner}) but its mode (${(st.mode & 0o777).toString(8).padStart(4, '0')}) shuts you out: give yourself access (chmod u+rwX), then run hardway again`;
  return `${displayPath(at)} belongs to ${owner}: run hardway as ${owner === 'root' ? 'root (sudo)' : `${owner} (the owner), or as root`}`;
}

/** A user's name from /etc/passwd, else `uid N`. */
function userName(uid: number): string {
  try {
    const line = readFileSync('/etc/passwd', 'utf8').split('\n').find((l) => l.split(':')[2] === String(uid));
    if (line) return line.split(':')[0]!;
  } catch {
    // No readable /etc/passwd: the number will do.
  }
  return `uid ${uid}`;
}

/** Runs `fn`; a file-system error it throws becomes pathError's, naming `shown` (others pass through). */
export function namingPath<T>(shown: string, fn: () => T, hint?: string): T {
  try {
    return fn();
  } catch (e) {
    throw pathError(e, shown, hint) ?? e;
  }
}
