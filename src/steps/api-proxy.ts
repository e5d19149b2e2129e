// api-proxy: with several control-plane machines, a node-local haproxy on every worker listening on
// 127.0.0.1:apiPort and spreading over every API server (TCP mode, /readyz health checks), as
// Kubespray runs one, so the kubelet and kube-proxy there (whose kubeconfigs dial 127.0.0.1) keep
// their API while any one control plane is down. haproxy is Debian's package (worker-os installs
// it with the other worker packages) and runs under Debian's own haproxy.service, which reads the
// config this step renders. With one control plane the step has nothing to do: the workers dial
// that machine's API server directly, as the tutorial does.
import { severalControlPlanes } from '../api-endpoints.ts';
import type { Change, ChangeStep, StepContext } from '../engine/types.ts';
import { PreconditionError } from '../errors.ts';
import { API_PROXY_SERVICE } from '../render/worker.ts';
import { sh } from '../shell.ts';
import { fileChangesFrom, inspect } from './support/inspect.ts';
import { renderedFor } from './support/rendered.ts';
import { withServiceChanges } from './support/services.ts';
import { executable } from '../probes/system.ts';

/** The haproxy binary Debian's package installs and its unit runs. */
const HAPROXY = '/usr/sbin/haproxy';

/** The api-proxy step. */
export const apiProxyStep: ChangeStep = {
  name: 'api-proxy',
  title: 'Run a node-local haproxy on 127.0.0.1 in front of every API server',
  targets: (inv) => (severalControlPlanes(inv) ? inv.workers : []),
  idle: (inv) => (severalControlPlanes(inv) ? undefined : 'one control-plane machine: the workers dial its API server directly'),
  async plan(ctx: StepContext): Promise<Change[]> {
    const { inventory, machine, facts } = ctx;
    const { files, inputs } = renderedFor(inventory, machine, 'api-proxy');
    const found = await inspect(facts, files.map((f) => f.path), [API_PROXY_SERVICE], { haproxy: executable.ask(HAPROXY) });
    // A dry run plans as if worker-os, which runs first and plans the package, had installed it.
    if (!found.probes.haproxy && !ctx.options.dryRun) {
      throw new PreconditionError(`${machine.hostname}: ${HAPROXY} is not installed, and the kubelet and kube-proxy there reach the API through it`,
        `run "hardway bootstrap-workers --only worker-os --node ${machine.hostname}" (it installs Debian's haproxy package with the other worker packages)`);
    }
    return withServiceChanges(found.services, [API_PROXY_SERVICE], inputs, fileChangesFrom(found, files));
  },
};
