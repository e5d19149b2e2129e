// doctor's one read of the API, made directly: every Node, Pod, Deployment and Event as the one
// List `kubectl get nodes,pods,deployments,events --all-namespaces -o json` prints (its items
// with their kind), so doctor parses either alike.
import { FailureError } from '../errors.ts';
import { jsonOf, statusMessage, type HttpsEndpoint } from './https-endpoint.ts';
import { collectionPath, kindOf, withKind } from './resources.ts';

/** The kinds doctor lists, in kubectl's order. */
export const DOCTOR_KINDS = ['nodes', 'pods', 'deployments', 'events'] as const;

/** How doctor's evidence names this read: the endpoint and what it lists. */
export function doctorListsCommand(api: HttpsEndpoint): string {
  return `GET ${api.url} ${DOCTOR_KINDS.map((k) => collectionPath(kindOf(k))).join(' ')}`;
}

/** The List of every object of DOCTOR_KINDS; an HTTP error fails with the API's words, a NoAnswer propagates. */
export async function readDoctorLists(api: HttpsEndpoint): Promise<string> {
  const lists = await Promise.all(DOCTOR_KINDS.map(async (k) => {
    const kind = kindOf(k);
    const a = await api.get(collectionPath(kind));
    if (a.status !== 200) throw new FailureError(`${collectionPath(kind)}: ${statusMessage(a)}`);
    return withKind(kind, jsonOf<{ items?: object[] }>(a).items ?? []);
  }));
  return JSON.stringify({ apiVersion: 'v1', kind: 'List', items: lists.flat() });
}
