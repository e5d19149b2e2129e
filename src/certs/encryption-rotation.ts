// The encryption key's rotation as pki/encryption-config.yaml sees it. The config alone says where
// a rotation is (the number in a key's name says which key is newer: hardway names them key1, key2...):
//   one key            [key1]        no rotation under way: the next one adds a key
//   added              [key1, key2]  the new key decrypts but does not encrypt yet: promote it next
//   promoted           [key2, key1]  the new key encrypts: rewrite every Secret, then drop key1
// Every write here is one atomic rename of the whole file (0600); no key ever reaches output.
import { join } from 'node:path';
import { FailureError } from '../errors.ts';
import { PKI } from '../layout.ts';
import { encryptionConfigProblem, encryptionKeys, newEncryptionKey, renderEncryptionKeys, type EncryptionKey } from './encryption.ts';
import { readOptional, SECRET_MODE, writePkiFile } from './pki-files.ts';

/** Where a rotation of the encryption key is, read from pki/encryption-config.yaml. */
export type EncryptionState = 'one-key' | 'added' | 'promoted';

/** The stages of a rotation, in order, as output numbers them. */
export const ENCRYPTION_STAGES = ['add', 'promote', 'rewrite', 'drop'] as const;

/** One stage of a rotation of the encryption key. */
export type EncryptionStage = (typeof ENCRYPTION_STAGES)[number];

/** "2/4": where a stage is in the rotation. */
export function encryptionStageNumber(stage: EncryptionStage): string {
  return `${ENCRYPTION_STAGES.indexOf(stage) + 1}/${ENCRYPTION_STAGES.length}`;
}

/** What pki/encryption-config.yaml holds: its keys in order (the first encrypts) and the state they say. */
export interface EncryptionConfigState {
  keys: EncryptionKey[];
  state: EncryptionState;
}

/** The number in a key's name (key7: 7), or a failure naming the key: hardway tells new from old by it. */
function keyNumber(name: string): number {
  const m = /^key([1-9]\d{0,8})$/.exec(name);
  if (!m) {
    throw new FailureError(`${PKI.encryptionConfig} has a key named "${name.slice(0, 40)}": a rotation tells the new key from the old by the number in names key1, key2, ...; nothing was changed`,
      'rename the keys in pki/ (key1 for the one in use) and run hardway distribute before rotating; the name is stored with each Secret, so rename it on the machines too');
  }
  return Number(m[1]);
}

/** Reads pki/encryption-config.yaml and says where a rotation is; a config hardway cannot rotate is a failure. */
export function encryptionState(dir: string): EncryptionConfigState {
  const text = readOptional(join(dir, PKI.encryptionConfig));
  if (text === undefined) throw new FailureError(`${PKI.encryptionConfig} is missing: there is no key to rotate`, 'run hardway encryption-config (or hardway up) first');
  const problem = encryptionConfigProblem(text);
  if (problem) throw new FailureError(`${PKI.encryptionConfig} ${problem}; nothing was changed`, 'repair it, or restore it from your backup');
  const keys = encryptionKeys(text);
  const numbers = keys.map((k) => keyNumber(k.name));
  if (keys.length === 1) return { keys, state: 'one-key' };
  if (keys.length === 2 && numbers[0] !== numbers[1]) return { keys, state: numbers[0]! < numbers[1]! ? 'added' : 'promoted' };
  throw new FailureError(`${PKI.encryptionConfig} holds ${keys.length} keys (${keys.map((k) => k.name).join(', ')}): no stage of a rotation; nothing was changed`,
    'a rotation holds one key, or two with different numbers; restore the file from your backup, or put back the one of the stage you were at');
}

/** The line that says which keys pki/ holds, by name only: `key2 (encrypts), key1 (decrypts only)`. */
export function keysLine(keys: readonly EncryptionKey[]): string {
  return keys.map((k, i) => `${k.name} (${i === 0 ? 'encrypts and decrypts' : 'decrypts only'})`).join(', ');
}

function write(dir: string, keys: EncryptionKey[]): void {
  writePkiFile(dir, PKI.encryptionConfig, renderEncryptionKeys(keys), SECRET_MODE);
}

/** Stage add: a new random key joins behind the one in use (it decrypts, it does not encrypt yet). Returns its name. */
export function addKey(dir: string): string {
  const { keys, state } = encryptionState(dir);
  if (state !== 'one-key') throw new Error(`addKey in state ${state}`);
  const name = `key${keyNumber(keys[0]!.name) + 1}`;
  write(dir, [keys[0]!, { name, secret: newEncryptionKey() }]);
  return name;
}

/** Stage promote: the new key goes first (it encrypts what is written from now on), the old one still decrypts. */
export function promoteKey(dir: string): void {
  const { keys, state } = encryptionState(dir);
  if (state !== 'added') throw new Error(`promoteKey in state ${state}`);
  write(dir, [keys[1]!, keys[0]!]);
}

/** Stage drop: the old key leaves (every Secret must have been rewritten with the new one). Returns its name. */
export function dropKey(dir: string): string {
  const { keys, state } = encryptionState(dir);
  if (state !== 'promoted') throw new Error(`dropKey in state ${state}`);
  write(dir, [keys[0]!]);
  return keys[1]!.name;
}
