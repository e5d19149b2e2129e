// Everything pki/ holds for a cluster, made in order: certificates, then the kubeconfigs that embed
// them, then the encryption config; each maker keeps what is already right.
import type { Inventory } from '../inventory.ts';
import { ensureCertificates } from './ensure.ts';
import type { PkiReport } from './pki-report.ts';
import { writeEncryptionConfig } from './write-encryption-config.ts';
import { writeKubeconfigs } from './write-kubeconfigs.ts';

/** One group of pki/'s files: what it is (for a progress line before it is made) and its maker. */
export interface PkiMaker {
  what: string;
  make: () => Promise<PkiReport> | PkiReport;
}

/** The makers of pki/, in the order they must run; each returns what it did. */
export function pkiMakers(inv: Inventory): PkiMaker[] {
  return [
    { what: 'the CAs and certificates (a new key takes a moment)', make: () => ensureCertificates(inv, new Date()) },
    { what: 'the kubeconfigs', make: () => writeKubeconfigs(inv) },
    { what: 'the encryption config', make: () => writeEncryptionConfig(inv) },
  ];
}
