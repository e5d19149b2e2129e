// `hardway encryption-config`: pki/encryption-config.yaml, generated once and then kept, because a
// new key on rerun would make every secret already stored in etcd unreadable.
import { join, resolve } from 'node:path';
import { INVENTORY_OPTIONS, say, type CliCommand } from '../cli/command.ts';
import { encryptionConfigProblem, newEncryptionKey, renderEncryptionConfig } from '../certs/encryption.ts';
import { checkPkiDir, ensurePkiDir, narrowMode, readOptional, SECRET_MODE, writeAtomic } from '../certs/pki-files.ts';
import { FailureError } from '../errors.ts';
import { withRunLock } from '../engine/lock.ts';
import { loadInventory, type Inventory } from '../inventory.ts';
import type { Writable } from 'node:stream';
import { PKI } from '../layout.ts';

/** Creates the encryption config with a fresh random key if there is none; otherwise keeps it untouched. */
export const encryptionConfigCommand: CliCommand = {
  name: 'encryption-config',
  summary: 'Write the encryption-at-rest config (key generated once, then kept)',
  details:
    'EncryptionConfiguration for secrets: aescbc with a random 32-byte key "key1", then identity. ' +
    'Written once to pki/encryption-config.yaml (mode 0600); a rerun keeps it byte for byte. ' +
    'The key is never printed.',
  options: { ...INVENTORY_OPTIONS },
  async run({ values, stdout, cwd }) {
    const inv = loadInventory(resolve(cwd, values.machines as string));
    return withRunLock(inv.dir, 'encryption-config', () => writeEncryptionConfig(inv, stdout));
  },
};

/** What `hardway encryption-config` does once it holds the project's lock (`up` runs it under its own). */
export async function writeEncryptionConfig(inv: Inventory, stdout: Writable): Promise<number> {
  checkPkiDir(inv.dir);
  const file = join(inv.dir, PKI.encryptionConfig);
  const existing = readOptional(file);
  if (existing !== undefined) {
    const problem = encryptionConfigProblem(existing);
    if (problem) {
      throw new FailureError(
        `${PKI.encryptionConfig} exists but ${problem}; nothing was changed`,
        'hardway does not replace it, since a new key makes the secrets already stored unreadable: repair it, or restore it from your backup',
      );
    }
    say(stdout, `kept ${PKI.encryptionConfig}`);
    const note = narrowMode(file, SECRET_MODE, PKI.encryptionConfig);
    if (note) say(stdout, note);
    return 0;
  }
  const dirNote = ensurePkiDir(inv.dir);
  if (dirNote) say(stdout, dirNote);
  writeAtomic(file, renderEncryptionConfig(newEncryptionKey()), SECRET_MODE);
  say(stdout, `written ${PKI.encryptionConfig} (new 32-byte key "key1"; back it up: without it, stored secrets cannot be read)`);
  return 0;
}
