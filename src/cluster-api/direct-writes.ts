// Making an ApiWrite from the jumpbox: server-side apply (PATCH, application/apply-patch+yaml,
// fieldManager=hardway, force=true: hardway owns the fields it sets, whoever set them before, as
// `kubectl apply` did) and deletes that wait, when asked, until the object is gone.
import { FailureError } from '../errors.ts';
import { NoAnswer, statusMessage, type HttpsEndpoint } from './https-endpoint.ts';
import { objectRef } from './resources.ts';
import type { ApiWrite } from './writes.ts';
import { SECOND, type Pace } from './answers.ts';

/** The field manager of every direct apply. */
export const FIELD_MANAGER = 'hardway';

/** Seconds a delete with `wait` waits for the object to be gone (kubectl delete --wait's finalizers). */
export const DELETE_WAIT_S = 60;

/** The query of a server-side apply that takes over every field it sets. */
export const APPLY_QUERY = `?fieldManager=${FIELD_MANAGER}&force=true`;

/** Makes `write` through the API server; an HTTP error fails with the API's words, a NoAnswer propagates (the caller runs kubectl instead). */
export async function writeDirectly(api: HttpsEndpoint, write: ApiWrite, pace: Pace = SECOND): Promise<void> {
  if (write.op === 'apply') {
    // In the manifest's order: a binding after its role, a Deployment after its ConfigMap.
    for (const o of write.objects) {
      // One document, without the separator the add-on's manifest puts before each.
      const a = await api.patch(`${objectRef(o.resource).path}${APPLY_QUERY}`, o.yaml.replace(/^---\n/, ''), 'application/apply-patch+yaml');
      if (a.status < 200 || a.status > 299) throw new FailureError(`the API server refused to apply ${o.resource}: ${statusMessage(a)}`);
    }
    return;
  }
  for (const resource of write.resources) {
    const path = objectRef(resource).path;
    const a = await api.delete(path, JSON.stringify({ kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: 'Background' }));
    if (a.status === 404) continue;
    if (a.status < 200 || a.status > 299) throw new FailureError(`the API server refused to delete ${resource}: ${statusMessage(a)}`);
    if (!write.wait) continue;
    const deadline = Date.now() + DELETE_WAIT_S * 1000;
    for (;;) {
      const now = await api.get(path).catch((e: unknown) => {
        if (e instanceof NoAnswer) return undefined;
        throw e;
      });
      if (now?.status === 404) break;
      if (Date.now() >= deadline) throw new FailureError(`${resource} was deleted but is still there after ${DELETE_WAIT_S}s (a finalizer holds it?)`);
      await pace.sleep(pace.everyMs);
    }
  }
}
