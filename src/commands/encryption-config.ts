// `hardway encryption-config`: pki/encryption-config.yaml, generated once and then kept, because a
// new key on rerun would make every secret already stored in etcd unreadable.
import { INVENTORY_OPTIONS, jsonOption, machinesFile, type CommandModule } from '../cli/command.ts';
import { reportLines } from '../cli/json-output.ts';
import { writeEncryptionConfig } from '../certs/write-encryption-config.ts';
import { withRunLock } from '../engine/lock.ts';
import { loadInventory } from '../inventory.ts';
import { printReport } from './print-report.ts';

/** Creates the encryption config with a fresh random key if there is none; otherwise keeps it untouched. */
export const encryptionConfigCommand: CommandModule = {
  name: 'encryption-config',
  details:
    'EncryptionConfiguration for secrets: aescbc with a random 32-byte key "key1", then identity. ' +
    'Written once to pki/encryption-config.yaml (mode 0600); a rerun keeps it byte for byte. ' +
    'The key is never printed.',
  options: { ...INVENTORY_OPTIONS, json: jsonOption('{ok, lines}, as printed without --json') },
  examples: [['hardway encryption-config', 'write pki/encryption-config.yaml if it is not there (never a new key over an old one)']],
  jsonFields: { lines: [] },
  run: (ctx) => reportLines(ctx, async ({ stdout, stderr, ...rest }) => {
    const inv = loadInventory(machinesFile(rest));
    return withRunLock(inv.dir, 'encryption-config', async () => {
      printReport(writeEncryptionConfig(inv), { stdout, stderr });
      return 0;
    });
  }),
};
