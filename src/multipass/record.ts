// The record of the VMs hardway launched, one JSON file per prefix under the state directory:
// written before a launch (so `down` can undo a half `up`), read by `status` and `down`, which
// delete only the VMs listed in it.
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { InputError } from '../errors.ts';
import { DEFAULT_PREFIX, PREFIX } from './names.ts';
import type { MultipassRecord } from './types.ts';

/** The record file of a prefix. */
export function recordFile(stateDir: string, prefix: string): string {
  return join(stateDir, `${prefix}.json`);
}

/** A prefix's record, or undefined when hardway launched nothing under it. */
export function readRecord(stateDir: string, prefix: string): MultipassRecord | undefined {
  const file = recordFile(stateDir, prefix);
  if (!existsSync(file)) return undefined;
  return JSON.parse(readFileSync(file, 'utf8')) as MultipassRecord;
}

/** Writes a record whole (temp file + rename), in a directory only its owner reads. */
export function writeRecord(stateDir: string, record: MultipassRecord): void {
  mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  const file = recordFile(stateDir, record.prefix);
  writeFileSync(`${file}.tmp`, JSON.stringify(record, null, 2) + '\n', { mode: 0o600 });
  renameSync(`${file}.tmp`, file);
}

/** Removes a prefix's record. */
export function removeRecord(stateDir: string, prefix: string): void {
  rmSync(recordFile(stateDir, prefix), { force: true });
}

/** Every prefix with a record. */
export function listRecords(stateDir: string): string[] {
  if (!existsSync(stateDir)) return [];
  return readdirSync(stateDir).filter((f) => f.endsWith('.json')).map((f) => f.slice(0, -5)).filter((p) => PREFIX.test(p)).sort();
}

/** The prefix a command means: --name if given; else the only recorded one; else the default. */
export function resolvePrefix(stateDir: string, name: string | undefined): string {
  if (name !== undefined) {
    if (!PREFIX.test(name)) throw new InputError(`--name "${name}" is not allowed`, 'use the --name given to hardway multipass up');
    return name;
  }
  const all = listRecords(stateDir);
  return all.length === 1 ? all[0]! : DEFAULT_PREFIX;
}
