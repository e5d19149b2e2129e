// The writes a step's change can carry besides its kubectl command: objects to apply (server-side
// apply from the jumpbox) and objects to delete. Pure data, planned by the steps; the engine's
// host layer makes them directly when the API server answers the jumpbox, and runs the change's
// kubectl command on the machine otherwise (direct-writes.ts).
import { parseAllDocuments } from 'yaml';
import { OBJECTS_NAMESPACE } from '../probes/kubectl.ts';

/** One object to apply: TYPE/NAME as kubectl names it, and its manifest (one YAML document). */
export interface ApplyObject {
  resource: string;
  yaml: string;
}

/** A write to the API: apply objects, or delete objects (namespaced ones in kube-system) and, with `wait`, until they are gone. */
export type ApiWrite =
  | { op: 'apply'; objects: ApplyObject[] }
  | { op: 'delete'; resources: string[]; wait: boolean };

/** The apply of every document of a manifest (kind and name read from each). */
export function applyManifest(manifest: string): ApiWrite {
  const objects = parseAllDocuments(manifest).map((doc) => {
    const o = doc.toJSON() as { kind: string; metadata: { name: string; namespace?: string } };
    if (o.metadata.namespace !== undefined && o.metadata.namespace !== OBJECTS_NAMESPACE) {
      throw new Error(`${o.kind}/${o.metadata.name} is in namespace ${o.metadata.namespace}: direct writes know only ${OBJECTS_NAMESPACE}`);
    }
    return { resource: `${o.kind.toLowerCase()}/${o.metadata.name}`, yaml: doc.toString() };
  });
  return { op: 'apply', objects };
}

/** What a write does, for plans: `apply clusterrole/NAME, clusterrolebinding/NAME`, `delete service/kube-dns (and wait until it is gone)`. */
export function describeWrite(w: ApiWrite): string {
  if (w.op === 'apply') return `apply ${w.objects.map((o) => o.resource).join(', ')}`;
  return `delete ${w.resources.join(', ')}${w.wait ? ' (and wait until gone)' : ''}`;
}
