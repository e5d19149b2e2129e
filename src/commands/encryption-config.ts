// `hardway encryption-config`: pki/encryption-config.yaml, generated once and then kept, because a
// new key on rerun would make every secret already stored in etcd unreadable.
import { join } from 'node:path';
import { INVENTORY_OPTIONS, jsonOption, machinesFile, type CommandModule } from '../cli/command.ts';
import { reportLines } from '../cli/json-output.ts';
import { encryptionConfigProblem, newEncryptionKey, renderEncryptionConfig } from '../certs/encryption.ts';
import { checkPkiDir, ensurePkiDir, narrowMode, readOptional, SECRET_MODE, writePkiFile } from '../certs/pki-files.ts';
import { FailureError } from '../errors.ts';
import { withRunLock } from '../engine/lock.ts';
import { loadInventory, type Inventory } from '../inventory.ts';
import { doneLine, keptLine, type PkiLine, type PkiReport } from '../certs/pki-report.ts';
import { printReport } from './print-report.ts';
import { PKI } from '../layout.ts';

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

/** What `hardway encryption-config` does once it holds the project's lock (`up` runs it under its own). */
export function writeEncryptionConfig(inv: Inventory): PkiReport {
  const lines: PkiLine[] = [];
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
    lines.push(keptLine(`kept ${PKI.encryptionConfig}`));
    const note = narrowMode(file, SECRET_MODE, PKI.encryptionConfig);
    if (note) lines.push(doneLine(note));
    return { lines, warnings: [] };
  }
  const dirNote = ensurePkiDir(inv.dir);
  if (dirNote) lines.push(doneLine(dirNote));
  writePkiFile(inv.dir, PKI.encryptionConfig, renderEncryptionConfig(newEncryptionKey()), SECRET_MODE);
  lines.push(doneLine(`written ${PKI.encryptionConfig} (new 32-byte key "key1"; back it up: without it, stored secrets cannot be read)`));
  return { lines, warnings: [] };
}
