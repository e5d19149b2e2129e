// cert-expired's material: a worker's kubelet certificate reissued by the project's real CA with
// the same subject, names and key, but whose validity ended yesterday, and the kubelet kubeconfig
// that embeds it. Pure given the pki/ texts and a clock.
import { createPrivateKey, createPublicKey } from 'node:crypto';
import { identitiesFor, profileOf } from '../certs/identities.ts';
import { issueCertificate } from '../certs/issue.ts';
import { kubeconfigsFor, renderKubeconfig } from '../certs/kubeconfig.ts';
import type { Inventory } from '../inventory.ts';

const DAY_MS = 86_400_000;

/** The PEM texts of pki/ the reissue needs. Secret: never printed. */
export interface ExpiredCertInput {
  caPem: string;
  caKeyPem: string;
  /** The worker's own kubelet key (pki/machines/<hostname>/kubelet.key): the kubeconfig embeds it. */
  keyPem: string;
}

/** The expired certificate and the kubeconfig carrying it, for `hostname`'s kubelet. */
export function expiredKubelet(inv: Inventory, hostname: string, input: ExpiredCertInput, now: Date): { certPem: string; kubeconfig: string } {
  const id = identitiesFor(inv).find((i) => i.machine === hostname && i.role === 'kubelet');
  const spec = kubeconfigsFor(inv).find((k) => k.identity === id?.name);
  if (!id || !spec) throw new Error(`${hostname} is not a worker of this inventory`);
  const key = createPrivateKey(input.keyPem);
  // Issued two days ago for one day: notAfter is a day in the past on any sane clock.
  const certPem = issueCertificate(profileOf(id), createPublicKey(key), { certificatePem: input.caPem, privateKey: createPrivateKey(input.caKeyPem) },
    { now: new Date(now.getTime() - 2 * DAY_MS), validityDays: 1 });
  return { certPem, kubeconfig: renderKubeconfig(spec, { caPem: input.caPem, certPem, keyPem: input.keyPem }) };
}
