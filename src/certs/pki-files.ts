// Reading and writing files in pki/: atomic writes (temp file beside the target, then rename, so
// no reader ever sees half a key), a 0700 directory, and 0600 for anything secret.
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { PKI } from '../layout.ts';

/** Mode of pki/ itself. */
export const DIR_MODE = 0o700;
/** Mode of every private key and every file that embeds one. */
export const SECRET_MODE = 0o600;
/** Mode of certificates (public). */
export const PUBLIC_MODE = 0o644;

/** A file's text, or undefined if it does not exist. */
export function readOptional(file: string): string | undefined {
  return existsSync(file) ? readFileSync(file, 'utf8') : undefined;
}

/** Writes a file atomically with the given mode: the target is either the old or the new content. */
export function writeAtomic(file: string, content: string | Buffer, mode: number): void {
  const tmp = join(dirname(file), `.${randomBytes(6).toString('hex')}.tmp`);
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
  mkdirSync(dirname(file), { recursive: true, mode: DIR_MODE });
  writeAtomic(file, content, mode);
}

/** Creates pki/ as 0700 or narrows an existing one; returns a note for the user when it changed a mode. */
export function ensurePkiDir(projectDir: string): string | undefined {
  const dir = join(projectDir, PKI.dir);
  if (!existsSync(dir)) {
    mkdirSync(dir, { recursive: true, mode: DIR_MODE });
    chmodSync(dir, DIR_MODE);
    return undefined;
  }
  return narrowMode(dir, DIR_MODE, `${PKI.dir}/`);
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
