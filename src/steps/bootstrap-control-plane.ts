// bootstrap-control-plane: the API server, controller manager and scheduler on every
// control-plane machine: binaries, configs and units; each service restarted only when one of its
// own inputs changed; waits until each is active. The API server reaches etcd over TLS, and its
// --service-cluster-ip-range is the service CIDR whose first address is in its certificate.
import { SERVER } from '../layout.ts';
import type { Change, ChangeStep, StepContext } from '../engine/types.ts';
import { binaryFiles } from './support/binaries.ts';
import { CONTROL_PLANE_SERVICES } from './support/components.ts';
import { fileChangesFrom, inspect } from './support/inspect.ts';
import { renderedFor } from './support/rendered.ts';
import { withServiceChanges } from './support/services.ts';

/** The bootstrap-control-plane step. */
export const bootstrapControlPlaneStep: ChangeStep = {
  name: 'bootstrap-control-plane',
  title: 'Run the API server, controller manager and scheduler',
  targets: (inv) => inv.controlPlanes,
  async plan(ctx: StepContext): Promise<Change[]> {
    const { inventory, machine, facts } = ctx;
    const binaries = await binaryFiles(inventory.dir, [...CONTROL_PLANE_SERVICES, 'kubectl'], SERVER.bin);
    const { files, inputs } = renderedFor(inventory, machine, 'bootstrap-control-plane');
    const desired = [...binaries, ...files];
    const found = await inspect(facts, desired.map((d) => d.path), CONTROL_PLANE_SERVICES);
    const changes = fileChangesFrom(found, desired);
    const all = [...inputs, ...CONTROL_PLANE_SERVICES.map((s) => ({ path: `${SERVER.bin}/${s}`, services: [s] }))];
    return withServiceChanges(found.services, CONTROL_PLANE_SERVICES, all, changes);
  },
};
