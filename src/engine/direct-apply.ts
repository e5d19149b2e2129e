// The host layer's side of direct writes: on the first control plane (where the kubectl of
// kubelet-rbac and dns runs), a change that carries an API write is made from the jumpbox while
// its API server answers here; otherwise, and if it gives no answer, the change's kubectl command
// runs on the machine as before.
import { applyChange } from './apply.ts';
import type { Change } from './types.ts';
import type { Machine } from '../inventory.ts';
import type { Transport } from '../transport/types.ts';
import type { ClusterApi } from '../cluster-api/cluster-api.ts';
import { writeDirectly } from '../cluster-api/direct-writes.ts';
import { NoAnswer } from '../cluster-api/https-endpoint.ts';
import { describeWrite } from '../cluster-api/writes.ts';

/** How changes on `machine` are routed and applied with `api` beside its transport. */
export function directApply(api: ClusterApi, machine: Machine, transport: Transport, log: (line: string) => void = () => {}): {
  apply(change: Change): Promise<void>;
  route(changes: Change[]): Change[];
} {
  const first = machine.hostname === api.inv.controlPlanes[0]?.hostname;
  const route = (changes: Change[]) => changes.map((c) => (c.kind === 'exec' && c.api && (!first || !api.apiServer()) ? (({ api: _api, ...rest }) => rest)(c) : c));
  const apply = async (change: Change) => {
    const endpoint = first && change.kind === 'exec' && change.api ? api.apiServer() : undefined;
    if (!endpoint || change.kind !== 'exec' || !change.api) return applyChange(transport, change);
    // Logged before it is sent, as a command is: the run log shows what was under way when a run died.
    log(`api: ${describeWrite(change.api)} (from this machine to ${endpoint.url})`);
    try {
      await writeDirectly(endpoint, change.api);
      return;
    } catch (e) {
      if (!(e instanceof NoAnswer)) throw e;
    }
    // No answer from here: kubectl on the machine; if it gets through, the jumpbox cannot reach the API.
    await applyChange(transport, change);
    await api.confirmUnreachable(endpoint, '/readyz');
  };
  return { apply, route };
}
