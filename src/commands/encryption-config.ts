// `hardway encryption-config`: pki/encryption-config.yaml, generated once and then kept, because a
// new key on rerun would make every secret already stored in etcd unreadable.
import { resolve } from 'node:path';
import { INVENTORY_OPTIONS, type CliCommand } from '../cli/command.ts';
import { writeEncryptionConfig } from '../certs/write-encryption-config.ts';
import { withRunLock } from '../engine/lock.ts';
import { loadInventory } from '../inventory.ts';
import { printReport } from './print-report.ts';

/** Creates the encryption config with a fresh random key if there is none; otherwise keeps it untouched. */
export const encryptionConfigCommand: CliCommand = {
  name: 'encryption-config',
  summary: 'Write the encryption-at-rest config (key generated once, then kept)',
  details:
    'EncryptionConfiguration for secrets: aescbc with a random 32-byte key "key1", then identity. ' +
    'Written once to pki/encryption-config.yaml (mode 0600); a rerun keeps it byte for byte. ' +
    'The key is never printed.',
  options: { ...INVENTORY_OPTIONS },
  async run({ values, stdout, stderr, cwd }) {
    const inv = loadInventory(resolve(cwd, values.machines as string));
    return withRunLock(inv.dir, 'encryption-config', async () => {
      printReport(writeEncryptionConfig(inv), { stdout, stderr });
      return 0;
    });
  },
};
