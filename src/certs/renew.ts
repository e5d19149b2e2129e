// `hardway certs --renew [IDENTITY ...]`: which leaf certificates to reissue although they still
// match the inventory. Pure: the identities of the inventory and the names typed in, a selection out.
import { InputError } from '../errors.ts';
import { closest, didYouMean } from '../suggest.ts';
import { caRotationCommand } from './check.ts';
import type { Identity } from './identities.ts';

/** Why a leaf is reissued when --renew asked for it. */
export const RENEW_REASON = 'renewal asked for (--renew)';

/**
 * The names of the leaves to renew: every leaf for no names; else each name is a leaf's name
 * (`kube-api-server`, `node-0/kubelet`) or, when no leaf has that name, a machine's hostname (that
 * machine's own certificates). So a name means one thing even for a machine named like a
 * cluster-wide certificate: `admin` is the certificate admin, `admin/kubelet` the machine's own.
 * A CA is never a leaf (its rotation is `--renew-ca`); an unknown name is a usage error listing
 * the known ones.
 */
export function renewSelection(ids: readonly Identity[], names: readonly string[]): Set<string> {
  if (names.length === 0) return new Set(ids.map((i) => i.name));
  const picked = new Set<string>();
  const unknown: string[] = [];
  for (const name of names) {
    const exact = ids.filter((i) => i.name === name);
    const matches = exact.length > 0 ? exact : ids.filter((i) => i.machine === name);
    if (matches.length === 0) unknown.push(name);
    for (const m of matches) picked.add(m.name);
  }
  if (unknown.some((n) => n === 'ca' || n === 'etcd-ca')) {
    throw new InputError(`--renew reissues leaf certificates only, not the CA (${unknown.filter((n) => n === 'ca' || n === 'etcd-ca').join(', ')})`,
      `a CA is not a leaf: the cluster CA is rotated with ${caRotationCommand()}`);
  }
  if (unknown.length > 0) {
    const machines = [...new Set(ids.flatMap((i) => (i.machine ? [i.machine] : [])))];
    const near = didYouMean([...new Set(unknown.flatMap((n) => closest(n, [...ids.map((i) => i.name), ...machines])))]);
    throw new InputError(`unknown certificate ${unknown.map((n) => `"${n}"`).join(', ')} for --renew`,
      `${near ? `${near} ` : ''}the certificates are: ${ids.map((i) => i.name).join(', ')} (a machine's name, e.g. ${machines[0] ?? 'node-0'}, means its own)`);
  }
  return picked;
}
