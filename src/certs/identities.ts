// Every certificate the cluster needs, derived from the inventory, and a reader for what
// `hardway certs` / `kubeconfigs` / `encryption-config` wrote into pki/ (used by `distribute`).
import { join } from 'node:path';
import { apiServiceNames, sharedApiName } from '../api-names.ts';
import { FailureError } from '../errors.ts';
import type { Inventory, Machine } from '../inventory.ts';
import { PKI, type MachineRole } from '../layout.ts';
import type { DistinguishedName, Usage } from './asn1.ts';
import type { CertificateProfile } from './issue.ts';
import { checkPkiDir, readOptional } from './pki-files.ts';

/** The two certificate authorities: the cluster CA, and etcd's own CA (so a node cert can never reach etcd). */
export type CaName = 'ca' | 'etcd-ca';

/** One certificate authority: its name in output, subject and files. */
export interface CaIdentity {
  name: CaName;
  subject: DistinguishedName;
  files: { crt: string; key: string };
}

/** One leaf certificate: what it must say, who signs it, and where it lives in pki/. */
export interface Identity {
  /**
   * The name in output: a cluster-wide identity's file base name in pki/ (admin, kube-proxy, ...),
   * or `<hostname>/<role>` for a machine's own (node-0/kubelet, server/etcd-server), which lives
   * in pki/machines/<hostname>/. The two kinds can never share a name or a file.
   */
  name: string;
  subject: DistinguishedName;
  /** `DNS:name` / `IP:a.b.c.d` */
  sans: string[];
  usages: Usage[];
  issuer: CaName;
  files: { crt: string; key: string };
  /** The machine this certificate belongs to, for per-machine identities. */
  machine?: string;
  /** What the machine's certificate is for, for per-machine identities. */
  role?: MachineRole;
  /** Reissuing keeps the key (service-accounts: it signs every service-account token). */
  keepKey?: boolean;
}

/** The cluster CA and the etcd CA, in the order they are made. */
export function caIdentities(): CaIdentity[] {
  return [
    { name: 'ca', subject: { CN: 'CA' }, files: { ...PKI.ca } },
    { name: 'etcd-ca', subject: { CN: 'etcd-ca' }, files: { ...PKI.etcdCa } },
  ];
}

const BOTH: Usage[] = ['clientAuth', 'serverAuth'];

/** Every leaf certificate for an inventory, in a stable order. */
export function identitiesFor(inv: Inventory): Identity[] {
  const leaf = (name: string, subject: DistinguishedName, sans: string[], usages: Usage[], issuer: CaName = 'ca'): Identity => ({
    name, subject, sans, usages, issuer, files: { crt: PKI.crt(name), key: PKI.key(name) },
  });
  const own = (m: Machine, role: MachineRole, subject: DistinguishedName, sans: string[], usages: Usage[], issuer: CaName): Identity => {
    const { crt, key } = PKI.machine(m.hostname, role);
    return { name: machineIdentityName(m.hostname, role), subject, sans, usages, issuer, files: { crt, key }, machine: m.hostname, role };
  };
  const component = (name: string, org: string) => leaf(name, { CN: `system:${name}`, O: org }, [`DNS:${name}`, 'IP:127.0.0.1'], BOTH);
  const node = (m: Machine) =>
    own(m, 'kubelet', { CN: `system:node:${m.hostname}`, O: 'system:nodes' },
      [`DNS:${m.hostname}`, `DNS:${m.fqdn}`, 'IP:127.0.0.1', `IP:${m.ip}`], BOTH, 'ca');
  const svc = apiServiceNames(inv.settings.clusterDomain);
  const apiSans = unique([
    'IP:127.0.0.1', `IP:${inv.serviceIp}`, ...inv.controlPlanes.map((m) => `IP:${m.ip}`),
    ...svc.map((d) => `DNS:${d}`), ...inv.controlPlanes.flatMap((m) => [`DNS:${m.fqdn}`, `DNS:${m.hostname}`]),
    // Several control planes: the name the jumpbox dials, pinned to all of them.
    ...[sharedApiName(inv)].flatMap((n) => (n ? [`DNS:${n}`] : [])),
  ]);
  return [
    leaf('admin', { CN: 'admin', O: 'system:masters' }, [], ['clientAuth']),
    ...inv.workers.map(node),
    component('kube-proxy', 'system:node-proxier'),
    component('kube-controller-manager', 'system:kube-controller-manager'),
    component('kube-scheduler', 'system:kube-scheduler'),
    leaf('kube-api-server', { CN: 'kubernetes' }, apiSans, BOTH),
    { ...leaf('service-accounts', { CN: 'service-accounts' }, [], ['clientAuth']), keepKey: true },
    ...inv.controlPlanes.map((m) =>
      own(m, 'etcd-server', { CN: m.hostname },
        [`IP:${m.ip}`, 'IP:127.0.0.1', `DNS:${m.hostname}`, `DNS:${m.fqdn}`, 'DNS:localhost'], ['serverAuth', 'clientAuth'], 'etcd-ca')),
    leaf('etcd-client', { CN: 'kube-apiserver-etcd-client' }, [], ['clientAuth'], 'etcd-ca'),
  ];
}

/** The output name of a machine's own certificate: node-0/kubelet, server/etcd-server. */
export function machineIdentityName(hostname: string, role: MachineRole): string {
  return `${hostname}/${role}`;
}

/**
 * Fails (a bug, not bad input) unless every file of pki/ belongs to exactly one owner: the CAs,
 * each leaf's certificate and key, each kubeconfig, the encryption config. Writers call it before
 * writing anything, so no future identity can silently take over another's file (or the CA's).
 */
export function assertDistinctFiles(ids: Array<Pick<Identity, 'name' | 'files'>>, kubeconfigs: Array<{ name: string; file: string }> = []): void {
  const owner = new Map<string, string>();
  const claim = (file: string, who: string) => {
    const prev = owner.get(file);
    if (prev !== undefined && prev !== who) throw new Error(`${file} would belong to both ${prev} and ${who}`);
    owner.set(file, who);
  };
  for (const ca of caIdentities()) for (const f of [ca.files.crt, ca.files.key]) claim(f, `CA ${ca.name}`);
  for (const f of [PKI.caNext, PKI.caPrevious, PKI.etcdCaNext, PKI.etcdCaPrevious].flatMap((x) => [x.crt, x.key])) claim(f, 'a CA rotation');
  claim(PKI.encryptionConfig, 'the encryption config');
  for (const id of ids) for (const f of [id.files.crt, id.files.key]) claim(f, `certificate ${id.name}`);
  for (const k of kubeconfigs) claim(k.file, `kubeconfig ${k.name}`);
}

function unique(list: string[]): string[] {
  return [...new Set(list)];
}

/** What goes into the certificate of a leaf or a CA. */
export function profileOf(id: Identity | CaIdentity): CertificateProfile {
  return 'issuer' in id
    ? { subject: id.subject, sans: id.sans, usages: id.usages, ca: false }
    : { subject: id.subject, sans: [], usages: [], ca: true };
}

/** A subject as people read it: `CN=admin, O=system:masters`. */
export function formatSubject(dn: DistinguishedName): string {
  return dn.O === undefined ? `CN=${dn.CN}` : `CN=${dn.CN}, O=${dn.O}`;
}

/** The hardway command that creates a file in pki/, for "run ..." hints. */
export function producerOf(pkiPath: string): string {
  if (pkiPath.endsWith('.kubeconfig')) return 'hardway kubeconfigs';
  if (pkiPath === PKI.encryptionConfig) return 'hardway encryption-config';
  return 'hardway certs';
}

/**
 * Reads one file of pki/ (a PKI.* path) for the project of `inv`. A missing file is a failure
 * that names the command that creates it. Contents are secret material: never print them.
 */
export function readPkiFile(inv: Pick<Inventory, 'dir'>, pkiPath: string): Buffer {
  checkPkiDir(inv.dir);
  const text = readOptional(join(inv.dir, pkiPath));
  if (text === undefined) {
    throw new FailureError(`${pkiPath} is missing`, `run ${producerOf(pkiPath)} first`);
  }
  return Buffer.from(text, 'utf8');
}

/** The certificate and key of one identity (or CA) from pki/, for installing them on a machine. */
export function readIdentityFiles(inv: Pick<Inventory, 'dir'>, id: { files: { crt: string; key: string } }): { crt: Buffer; key: Buffer } {
  return { crt: readPkiFile(inv, id.files.crt), key: readPkiFile(inv, id.files.key) };
}
