// Every Secret written again through the API server, unchanged, so that it is stored with the
// encryption key that now comes first (`kubectl get secrets -A -o json | kubectl replace -f -`, the
// Kubernetes docs' step of a key rotation). An update of an unchanged object still reaches etcd when
// the API server read it with a key that is not the first (it calls such data stale), so the PUT of
// the object as listed is enough. Nothing of a Secret's data is ever printed.
import { FailureError } from '../errors.ts';
import { statusMessage, type HttpsEndpoint } from './https-endpoint.ts';

/** The part of an endpoint the rewrite uses (tests give a loopback server's). */
export type SecretsApi = Pick<HttpsEndpoint, 'get' | 'put' | 'url'>;

/** Secrets per page of the list, so a large cluster is not one huge answer. */
export const PAGE = 250;
/** Tries per Secret when it changed between the read and the write (409 Conflict): read it again and retry. */
const TRIES = 5;

interface SecretObject {
  metadata: { name: string; namespace: string };
  [k: string]: unknown;
}

/** Writes every Secret of every namespace again; returns how many were written (a Secret deleted meanwhile is skipped). */
export async function rewriteSecrets(api: SecretsApi): Promise<number> {
  let count = 0;
  let cont: string | undefined;
  do {
    const a = await api.get(`/api/v1/secrets?limit=${PAGE}${cont ? `&continue=${encodeURIComponent(cont)}` : ''}`);
    if (a.status !== 200) throw new FailureError(`listing the Secrets at ${api.url}: ${statusMessage(a)}`);
    const list = JSON.parse(a.body) as { items?: SecretObject[]; metadata?: { continue?: string } };
    for (const s of list.items ?? []) if (await rewriteOne(api, s)) count++;
    cont = list.metadata?.continue || undefined;
  } while (cont);
  return count;
}

/** One Secret written back as read; a conflict reads it again. False when it is gone. */
async function rewriteOne(api: SecretsApi, listed: SecretObject): Promise<boolean> {
  const { namespace, name } = listed.metadata;
  const path = `/api/v1/namespaces/${encodeURIComponent(namespace)}/secrets/${encodeURIComponent(name)}`;
  let secret: SecretObject = listed;
  for (let attempt = 1; ; attempt++) {
    // A List's items carry no kind or apiVersion; an update needs them.
    const a = await api.put(path, JSON.stringify({ ...secret, kind: 'Secret', apiVersion: 'v1' }));
    if (a.status >= 200 && a.status <= 299) return true;
    if (a.status === 404) return false;
    if (a.status !== 409 || attempt >= TRIES) throw new FailureError(`rewriting Secret ${namespace}/${name}: ${statusMessage(a)}`);
    const again = await api.get(path);
    if (again.status === 404) return false;
    if (again.status !== 200) throw new FailureError(`reading Secret ${namespace}/${name} again: ${statusMessage(again)}`);
    secret = JSON.parse(again.body) as SecretObject;
  }
}
