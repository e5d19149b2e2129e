// The TLS material the jumpbox talks to the cluster with, from pki/: the admin client certificate
// (group system:masters) for the API server, the etcd client certificate for etcd's health. Keys
// are read into memory for the TLS handshake only: they never reach a log, a plan or an error.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Inventory } from '../inventory.ts';
import { PKI } from '../layout.ts';
import { readPkiFile } from '../certs/identities.ts';
import type { TlsClient } from './https-endpoint.ts';

/** The identity (pki/<name>.crt and .key) the jumpbox asks the API server as. */
export const API_CLIENT = 'admin';
/** The identity it asks etcd's health as (signed by the etcd CA, as the API server's is). */
export const ETCD_CLIENT = 'etcd-client';

/** Whether pki/ holds what the direct route to the API server needs (the cluster CA and the admin certificate and key). */
export function hasApiCredentials(inv: Pick<Inventory, 'dir'>): boolean {
  return [PKI.ca.crt, PKI.crt(API_CLIENT), PKI.key(API_CLIENT)].every((f) => existsSync(join(inv.dir, f)));
}

/** Whether pki/ holds the etcd CA and the etcd client certificate and key. */
export function hasEtcdCredentials(inv: Pick<Inventory, 'dir'>): boolean {
  return [PKI.etcdCa.crt, PKI.crt(ETCD_CLIENT), PKI.key(ETCD_CLIENT)].every((f) => existsSync(join(inv.dir, f)));
}

/** The API server's client: the cluster CA (both, during a CA rotation: ca.crt holds them) and the admin certificate. */
export function apiClientTls(inv: Pick<Inventory, 'dir'>): TlsClient {
  return { ca: readPkiFile(inv, PKI.ca.crt), cert: readPkiFile(inv, PKI.crt(API_CLIENT)), key: readPkiFile(inv, PKI.key(API_CLIENT)) };
}

/** etcd's client: the etcd CA and the etcd client certificate. */
export function etcdClientTls(inv: Pick<Inventory, 'dir'>): TlsClient {
  return { ca: readPkiFile(inv, PKI.etcdCa.crt), cert: readPkiFile(inv, PKI.crt(ETCD_CLIENT)), key: readPkiFile(inv, PKI.key(ETCD_CLIENT)) };
}
