// Reading and writing files in pki/: atomic writes (temp file beside the target, then rename, so
// no reader ever sees half a key), a 0700 directory, and 0600 for anything secret.
import { chmodSync, existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { InputError } from '../errors.ts';
import { checkDirectory, displayPath, pathError, readInputFile } from '../input-file.ts';
import { PKI } from '../layout.ts';

/** Mode of pki/ itself. */
export const DIR_MODE = 0o700;
/** Mode of every private key and every file that embeds one. */
export const SECRET_MODE = 0o600;
/** Mode of certificates (public). */
export const PUBLIC_MODE = 0o644;

const MOVE_IT = 'move it out of the way: hardway keeps the CA, certificates, keys and kubeconfigs in pki/, and makes what is missing';

/** A file's text, or undefined if it does not exist; a directory (or worse) in its place is an InputError. */
export function readOptional(file: string): string | undefined {
  return readInputFile(file, displayPath(file), MOVE_IT);
}

/**
 * Checks pki/ and pki/machines/ before anything reads or writes in them: each is absent or a
 * directory (a link to one is fine); a file, or a link to nothing, is an InputError naming it.
 */
export function checkPkiDir(projectDir: string): void {
  for (const rel of [PKI.dir, PKI.machinesDir]) {
    const dir = join(projectDir, rel);
    checkDirectory(dir, displayPath(dir), rel === PKI.dir
      ? 'pki must be a directory (hardway makes it when absent): move what is there away, or point the link at a directory'
      : MOVE_IT);
  }
}

/** writeAtomic's temp files: `.` + 12 hex digits + this. */
const TMP_SUFFIX = '.tmp';
const TMP_NAME = /^\.[0-9a-f]{12}\.tmp$/;

/** Writes a file atomically with the given mode: the target is either the old or the new content. */
export function writeAtomic(file: string, content: string | Buffer, mode: number): void {
  const tmp = join(dirname(file), `.${randomBytes(6).toString('hex')}${TMP_SUFFIX}`);
  try {
    writeFileSync(tmp, content, { mode, flag: 'wx' });
    chmodSync(tmp, mode); // the umask may have narrowed it; make it exactly what was asked
    renameSync(tmp, file);
  } catch (e) {
    rmSync(tmp, { force: true });
    throw e;
  }
}

/**
 * Writes a file of pki/ (a PKI.* path) atomically, first making its directories inside pki/
 * (pki/machines/<hostname>/) 0700 like pki/ itself.
 */
export function writePkiFile(projectDir: string, pkiPath: string, content: string | Buffer, mode: number): void {
  const file = join(projectDir, pkiPath);
  try {
    mkdirSync(dirname(file), { recursive: true, mode: DIR_MODE });
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    // A file where pki/machines/<hostname>/ belongs.
    if (code === 'EEXIST' || code === 'ENOTDIR') throw new InputError(`${displayPath(dirname(file))} is not a directory`, MOVE_IT);
    throw pathError(e, displayPath(dirname(file)), MOVE_IT) ?? e;
  }
  writeAtomic(file, content, mode);
}

/** Creates pki/ as 0700 or narrows an existing one; returns a note for the user when it changed a mode. */
export function ensurePkiDir(projectDir: string): string | undefined {
  checkPkiDir(projectDir);
  const dir = join(projectDir, PKI.dir);
  if (!existsSync(dir)) {
    mkdirSync(dir, { recursive: true, mode: DIR_MODE });
    chmodSync(dir, DIR_MODE);
    return undefined;
  }
  removeStaleTemps(projectDir);
  return narrowMode(dir, DIR_MODE, `${PKI.dir}/`);
}

/**
 * Removes the temp files of writes a killed run left in pki/ and pki/machines/<hostname>/ (a
 * secret's temp file holds the secret). Called under the project lock, so no write is under way.
 */
function removeStaleTemps(projectDir: string): void {
  const root = join(projectDir, PKI.dir);
  const machines = join(projectDir, PKI.machinesDir);
  const dirs = [root, ...(existsSync(machines) ? readdirSync(machines, { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => join(machines, d.name)) : [])];
  for (const dir of dirs) {
    for (const name of readdirSync(dir)) if (TMP_NAME.test(name)) rmSync(join(dir, name), { force: true });
  }
}

/**
 * Narrows a file's mode to `mode` if it grants more (e.g. a key left 0644). Returns the note to
 * print, or undefined when nothing changed.
 */
export function narrowMode(file: string, mode: number, shown: string): string | undefined {
  if (!existsSync(file)) return undefined;
  const current = statSync(file).mode & 0o777;
  if ((current & ~mode) === 0) return undefined;
  chmodSync(file, mode);
  return `fixed mode of ${shown} (was ${octal(current)}, now ${octal(mode)})`;
}

/** True when a file grants more than `mode` allows. */
export function tooOpen(file: string, mode: number): number | undefined {
  const current = statSync(file).mode & 0o777;
  return (current & ~mode) === 0 ? undefined : current;
}

/** A mode as people write it: 0600. */
export function octal(mode: number): string {
  return `0${mode.toString(8).padStart(3, '0')}`;
}
