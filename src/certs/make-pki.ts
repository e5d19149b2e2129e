// Everything pki/ holds for a cluster, made in order: certificates, then the kubeconfigs that embed
// them, then the encryption config; each maker keeps what is already right.
import type { Inventory } from '../inventory.ts';
import { ensureCertificates } from './ensure.ts';
import type { PkiReport } from './pki-report.ts';
import { writeEncryptionConfig } from './write-encryption-config.ts';
import { writeKubeconfigs } from './write-kubeconfigs.ts';

/** The makers of pki/, in the order they must run; each returns what it did. */
export function pkiMakers(inv: Inventory): Array<() => Promise<PkiReport> | PkiReport> {
  return [
    () => ensureCertificates(inv, new Date()),
    () => writeKubeconfigs(inv),
    () => writeEncryptionConfig(inv),
  ];
}
