// Reading and writing files in pki/: every write goes through writePkiFiles, which never follows a
// link below pki/ and never leaves it (src/output-file.ts), writes whole files (temp file beside
// the target, then rename, so no reader ever sees half a key), makes directories 0700 like pki/,
// and gives anything secret 0600. pki/ itself may be a link to a directory the user chose.
import { chmodSync, existsSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { InputError } from '../errors.ts';
import { checkDirectory, displayPath, namingPath, readInputFile } from '../input-file.ts';
import { PKI } from '../layout.ts';
import { checkFilesInside, describeEntry, lstatOrNothing, narrowModeNoFollow, octal, TEMP_NAME, writeFilesInside, type OutputFile, type OutputRoot } from '../output-file.ts';

export { octal } from '../output-file.ts';

/** Mode of pki/ itself. */
export const DIR_MODE = 0o700;
/** Mode of every private key and every file that embeds one. */
export const SECRET_MODE = 0o600;
/** Mode of certificates (public). */
export const PUBLIC_MODE = 0o644;

const MOVE_IT = 'move it out of the way: hardway keeps the CA, certificates, keys and kubeconfigs in pki/, and makes what is missing';
const NO_LINKS = 'hardway writes in pki/ only through directories and files of its own, never through a link: replace the link with the directory or file itself (or move it away: hardway makes what is missing)';

/** pki/ of a project as the root of every write in it. */
export function pkiRoot(projectDir: string): OutputRoot {
  return { dir: join(projectDir, PKI.dir), hint: NO_LINKS, dirMode: DIR_MODE };
}

/** A PKI.* path (pki/...) relative to pki/. */
function inPki(pkiPath: string): string {
  if (!pkiPath.startsWith(`${PKI.dir}/`)) throw new Error(`${pkiPath} is not a path in ${PKI.dir}/`);
  return pkiPath.slice(PKI.dir.length + 1);
}

/** A file's text, or undefined if it does not exist; a directory (or worse) in its place is an InputError. */
export function readOptional(file: string): string | undefined {
  return readInputFile(file, displayPath(file), MOVE_IT);
}

/**
 * Checks pki/ and pki/machines/ before anything reads or writes in them: pki/ is absent or a
 * directory (a link to one is fine: the user chose where it lives); pki/machines/ is absent or a
 * directory of its own, never a link. A file, or a link to nothing, is an InputError naming it.
 */
export function checkPkiDir(projectDir: string): void {
  const dir = join(projectDir, PKI.dir);
  checkDirectory(dir, displayPath(dir), 'pki must be a directory (hardway makes it when absent): move what is there away, or point the link at a directory');
  const machines = join(projectDir, PKI.machinesDir);
  const st = existsSync(dir) ? lstatOrNothing(machines) : undefined;
  if (st !== undefined && !st.isDirectory()) {
    throw new InputError(`${describeEntry(machines, st)}, not a directory`, st.isSymbolicLink() ? NO_LINKS : MOVE_IT);
  }
}

/** One file of pki/ to write: a PKI.* path, its content and mode. */
export interface PkiWrite {
  pkiPath: string;
  content: string | Buffer;
  mode: number;
}

/**
 * Writes files of pki/ (PKI.* paths), all or none as far as the disk goes (see writeFilesInside):
 * directories inside pki/ (pki/machines/<hostname>/) are made 0700; a link below pki/, or a path
 * that would leave it, is refused before anything is written.
 */
export function writePkiFiles(projectDir: string, writes: readonly PkiWrite[]): void {
  writeFilesInside(pkiRoot(projectDir), writes.map((w): OutputFile => ({ path: inPki(w.pkiPath), content: w.content, mode: w.mode })));
}

/** Writes one file of pki/ (a PKI.* path); see writePkiFiles. */
export function writePkiFile(projectDir: string, pkiPath: string, content: string | Buffer, mode: number): void {
  writePkiFiles(projectDir, [{ pkiPath, content, mode }]);
}

/** Refuses, before anything is written, a link on the way to any of these PKI.* paths or in their place. */
export function checkPkiWrites(projectDir: string, pkiPaths: readonly string[]): void {
  if (!existsSync(join(projectDir, PKI.dir))) return;
  checkFilesInside(pkiRoot(projectDir), pkiPaths.map(inPki));
}

/** Creates pki/ as 0700 or narrows an existing one; returns a note for the user when it changed a mode. */
export function ensurePkiDir(projectDir: string): string | undefined {
  checkPkiDir(projectDir);
  const dir = join(projectDir, PKI.dir);
  if (!existsSync(dir)) {
    namingPath(displayPath(dir), () => {
      mkdirSync(dir, { recursive: true, mode: DIR_MODE });
      chmodSync(dir, DIR_MODE);
    });
    return undefined;
  }
  removeStaleTemps(projectDir);
  // pki/ itself may be a link the user made to a directory of theirs: its mode is narrowed there.
  const current = statSync(dir).mode & 0o777;
  if ((current & ~DIR_MODE) === 0) return undefined;
  namingPath(displayPath(dir), () => chmodSync(dir, DIR_MODE));
  return `fixed mode of ${PKI.dir}/ (was ${octal(current)}, now ${octal(DIR_MODE)})`;
}

/**
 * Removes the temp files of writes a killed run left in pki/ and pki/machines/<hostname>/ (a
 * secret's temp file holds the secret). Called under the project lock, so no write is under way.
 */
function removeStaleTemps(projectDir: string): void {
  const root = join(projectDir, PKI.dir);
  const machines = join(projectDir, PKI.machinesDir);
  // withFileTypes does not follow links: a linked directory is not entered.
  const dirs = [root, ...(existsSync(machines) ? readdirSync(machines, { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => join(machines, d.name)) : [])];
  for (const dir of dirs) {
    for (const name of readdirSync(dir)) if (TEMP_NAME.test(name)) rmSync(join(dir, name), { force: true });
  }
}

/**
 * Narrows a file's mode to `mode` if it grants more (e.g. a key left 0644), never through a link.
 * Returns the note to print, or undefined when nothing changed.
 */
export function narrowMode(file: string, mode: number, shown: string): string | undefined {
  const was = narrowModeNoFollow(file, mode, MOVE_IT);
  return was === undefined ? undefined : `fixed mode of ${shown} (was ${octal(was)}, now ${octal(mode)})`;
}

/** True when a file grants more than `mode` allows. */
export function tooOpen(file: string, mode: number): number | undefined {
  const current = statSync(file).mode & 0o777;
  return (current & ~mode) === 0 ? undefined : current;
}
