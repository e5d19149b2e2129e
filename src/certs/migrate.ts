// pki/ as earlier versions laid it out: a machine's certificate, key and kubeconfig were
// pki/<hostname>.crt|.key|.kubeconfig and an etcd member's pki/etcd-server-<hostname>.crt|.key, so a
// machine named like another identity (ca, admin, jumpbox, ...) shared that identity's files.
// `hardway certs` moves what is still right into pki/machines/<hostname>/, so an upgrade neither
// reissues a certificate nor restarts a service; anything else stays where it is.
import { existsSync, renameSync } from 'node:fs';
import type { X509Certificate } from 'node:crypto';
import { dirname, join } from 'node:path';
import type { Inventory } from '../inventory.ts';
import { PKI } from '../layout.ts';
import { caIdentities, identitiesFor, profileOf, type CaName, type Identity } from './identities.ts';
import { inspect } from './inspect.ts';
import { kubeconfigsFor } from './kubeconfig.ts';
import { checkPkiWrites, pkiRoot, readOptional } from './pki-files.ts';
import { dirsInside } from '../output-file.ts';

/** Where a machine's own files were before pki/machines/ (undefined for cluster-wide identities). */
export function legacyFiles(id: Identity): { crt: string; key: string; kubeconfig?: string } | undefined {
  if (id.machine === undefined) return undefined;
  if (id.role === 'kubelet') return { crt: PKI.crt(id.machine), key: PKI.key(id.machine), kubeconfig: PKI.kubeconfig(id.machine) };
  return { crt: PKI.crt(`etcd-server-${id.machine}`), key: PKI.key(`etcd-server-${id.machine}`) };
}

/**
 * Moves each machine certificate (and a worker's kubeconfig) from its old place into
 * pki/machines/<hostname>/ when the new place is empty and the old pair is exactly what that
 * machine needs (subject, names, usages, signed by today's CA, key matching). A file that the
 * current layout gives to another identity (pki/ca.crt, pki/admin.key, pki/jumpbox.kubeconfig...)
 * is never moved, whatever the machine is called. Returns one line per machine moved.
 */
export function migrateLegacyLayout(inv: Inventory, cas: Map<CaName, X509Certificate>, now: Date): string[] {
  const at = (p: string) => join(inv.dir, p);
  const ids = identitiesFor(inv);
  const owned = new Set([
    ...caIdentities().flatMap((c) => [c.files.crt, c.files.key]),
    ...ids.flatMap((i) => [i.files.crt, i.files.key]),
    ...kubeconfigsFor(inv).map((k) => k.file),
    PKI.encryptionConfig,
  ]);
  const lines: string[] = [];
  for (const id of ids) {
    const old = legacyFiles(id);
    if (!old || owned.has(old.crt) || owned.has(old.key)) continue;
    if (existsSync(at(id.files.crt)) || existsSync(at(id.files.key))) continue;
    const crtPem = readOptional(at(old.crt));
    const keyPem = readOptional(at(old.key));
    if (crtPem === undefined || keyPem === undefined) continue;
    const verdict = inspect({ profile: profileOf(id), crtPem, keyPem, issuer: cas.get(id.issuer), keyAlgorithm: inv.settings.keyAlgorithm, now });
    // Not exactly this machine's: leave it (`hardway certs` lists it as unused) and issue anew.
    if (verdict.differences.length > 0) continue;
    // Into a directory of pki/'s own, never through a link (the old files are in pki/ itself).
    checkPkiWrites(inv.dir, [id.files.crt, id.files.key]);
    dirsInside(pkiRoot(inv.dir), dirname(id.files.crt).slice(`${PKI.dir}/`.length), true);
    // Key first: stopped in between, the next run finds a key without a certificate and reissues.
    renameSync(at(old.key), at(id.files.key));
    renameSync(at(old.crt), at(id.files.crt));
    const moved = [old.crt, old.key];
    const kubeconfig = id.role === 'kubelet' ? PKI.machine(id.machine!, 'kubelet').kubeconfig : undefined;
    if (old.kubeconfig && kubeconfig && !owned.has(old.kubeconfig) && readOptional(at(old.kubeconfig)) !== undefined && !existsSync(at(kubeconfig))) {
      checkPkiWrites(inv.dir, [kubeconfig]);
      renameSync(at(old.kubeconfig), at(kubeconfig));
      moved.push(old.kubeconfig);
    }
    lines.push(`moved ${moved.join(', ')} into ${dirname(id.files.crt)}/ (where this version keeps ${id.name})`);
  }
  return lines;
}
