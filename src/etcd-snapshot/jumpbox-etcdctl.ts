// etcdctl on the jumpbox: the client binary `hardway download` puts in downloads/client/, talking
// to the members over TLS with the cluster's own etcd client certificate from pki/ (the one the
// API servers use), so a snapshot needs no SSH and nothing written on any machine.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { binaryRelPath, downloadsDir, requireBinaries } from '../download/layout.ts';
import { InputError, PreconditionError } from '../errors.ts';
import type { Inventory } from '../inventory.ts';
import { PKI } from '../layout.ts';
import { sh, type Command } from '../shell.ts';

/** The files of pki/ a client of etcd needs. */
const CLIENT_FILES = [PKI.etcdCa.crt, PKI.crt('etcd-client'), PKI.key('etcd-client')];

/** The path of downloads/client/etcdctl; InputError naming what to run when it (or pki/'s etcd client files) is missing. */
export function jumpboxEtcdctl(inv: Inventory, needsPki: boolean): string {
  try {
    requireBinaries(inv.dir, ['etcdctl']);
  } catch (e) {
    // Nothing was asked of any machine yet: what the project lacks is the user's to add (exit 2).
    if (e instanceof PreconditionError) throw new InputError(e.message, e.hint);
    throw e;
  }
  if (needsPki) {
    const missing = CLIENT_FILES.filter((f) => !existsSync(join(inv.dir, f)));
    if (missing.length) throw new InputError(`${missing.join(', ')} missing: etcd's client certificate is needed to reach etcd`, 'run "hardway certs" (or "hardway up")');
  }
  return join(downloadsDir(inv.dir), binaryRelPath('etcdctl'));
}

/** A member's client URL, as the etcd unit advertises it. */
export function clientUrl(ip: string): string {
  return `https://${ip}:2379`;
}

/**
 * `etcdctl snapshot save` from one member into `file` (umask 077: the file is 0600 from its first
 * byte). etcdctl writes FILE.part and renames it when the stream, hash included, is complete.
 */
export function snapshotSaveCommand(etcdctl: string, inv: Inventory, endpoint: string, file: string): Command {
  const [ca, cert, key] = CLIENT_FILES.map((f) => join(inv.dir, f));
  return sh`umask 077 && ETCDCTL_API=3 ${etcdctl} --endpoints=${endpoint} --cacert=${ca!} --cert=${cert!} --key=${key!} --dial-timeout=5s --command-timeout=5m snapshot save ${file}`;
}

/** `etcdctl snapshot status -w json` of a local file (reads it only). */
export function snapshotStatusCommand(etcdctl: string, file: string): Command {
  return sh`ETCDCTL_API=3 ${etcdctl} snapshot status ${file} -w json`;
}
