// state.json of each lab under the state root: written before `up` creates anything, so that
// `down` (and status, ssh...) can find every machine, mount and the bridge of a lab again.
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { InputError } from '../errors.ts';
import { DEFAULT_LAB, labDir, LAB_NAME, type LabPaths } from './names.ts';
import type { LabState } from './types.ts';

/** Path of a lab's state.json. */
export function stateFile(paths: LabPaths, lab: string): string {
  return join(labDir(paths, lab), 'state.json');
}

/** Reads a lab's state, or undefined if there is no such lab. */
export function readState(paths: LabPaths, lab: string): LabState | undefined {
  const file = stateFile(paths, lab);
  if (!existsSync(file)) return undefined;
  return JSON.parse(readFileSync(file, 'utf8')) as LabState;
}

/** Writes a lab's state atomically (temp file + rename). */
export function writeState(paths: LabPaths, state: LabState): void {
  const dir = labDir(paths, state.plan.spec.name);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = stateFile(paths, state.plan.spec.name);
  writeFileSync(`${file}.tmp`, JSON.stringify(state, null, 2) + '\n');
  renameSync(`${file}.tmp`, file);
}

/** Names of every lab that has a directory under the state root (with or without state.json). */
export function listLabs(paths: LabPaths): string[] {
  if (!existsSync(paths.stateRoot)) return [];
  return readdirSync(paths.stateRoot, { withFileTypes: true })
    .filter((d) => d.isDirectory() && LAB_NAME.test(d.name))
    .map((d) => d.name)
    .sort();
}

/** The lab a command means: --name if given; else the only lab; else the default lab. */
export function resolveLab(paths: LabPaths, name: string | undefined): LabState {
  const labs = listLabs(paths).filter((l) => readState(paths, l) !== undefined);
  const chosen = name ?? (labs.length === 1 ? labs[0]! : DEFAULT_LAB);
  const state = readState(paths, chosen);
  if (!state) {
    throw new InputError(`no lab named "${chosen}" on this host`,
      labs.length > 0 ? `labs here: ${labs.join(', ')}; pass --name NAME` : 'start one with: hardway lab up');
  }
  return state;
}
