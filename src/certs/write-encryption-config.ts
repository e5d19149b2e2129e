// pki/encryption-config.yaml: generated once and then kept byte for byte, because a new key on
// rerun would make every secret already stored in etcd unreadable.
import { join } from 'node:path';
import { encryptionConfigProblem, newEncryptionKey, renderEncryptionConfig } from './encryption.ts';
import { checkPkiDir, ensurePkiDir, narrowMode, readOptional, SECRET_MODE, writePkiFile } from './pki-files.ts';
import { doneLine, keptLine, type PkiLine, type PkiReport } from './pki-report.ts';
import { FailureError } from '../errors.ts';
import type { Inventory } from '../inventory.ts';
import { PKI } from '../layout.ts';

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
