// bootstrap-etcd: etcd on every control-plane machine, served over TLS with client-certificate
// authentication for clients and peers, member name = hostname, data directory 0700. Every
// control-plane line of machines.txt joins the same cluster. Waits until the member is healthy.
import { SERVER } from '../layout.ts';
import { formatMode } from '../engine/facts.ts';
import type { Change, ChangeStep, StepContext } from '../engine/types.ts';
import { CommandError } from '../errors.ts';
import { sh } from '../shell.ts';
import { binaryFiles } from './support/binaries.ts';
import { etcdHealthCommand, etcdHealthy } from '../probes/etcdctl.ts';
import { pathMode } from '../probes/system.ts';
import { fileChangesFrom, inspect } from './support/inspect.ts';
import { renderedFor } from './support/rendered.ts';
import { withServiceChanges } from './support/services.ts';

/** The bootstrap-etcd step. */
export const bootstrapEtcdStep: ChangeStep = {
  name: 'bootstrap-etcd',
  title: 'Run etcd over TLS (client and peer certificates) on the control-plane machines',
  targets: (inv) => inv.controlPlanes,
  async plan(ctx: StepContext): Promise<Change[]> {
    const { inventory, machine, facts } = ctx;
    const desired = [...(await binaryFiles(inventory.dir, ['etcd', 'etcdctl'], SERVER.bin)), ...renderedFor(inventory, machine, 'bootstrap-etcd').files];
    const inputs = [...renderedFor(inventory, machine, 'bootstrap-etcd').inputs, { path: `${SERVER.bin}/etcd`, services: ['etcd'] }];
    const found = await inspect(facts, desired.map((d) => d.path), ['etcd'], { dataDir: pathMode.ask(SERVER.etcdDataDir) });
    const changes: Change[] = [];
    const dataDir = found.probes.dataDir;
    if (dataDir !== '700') {
      changes.push({
        kind: 'exec',
        cmd: sh`install -d -m 0700 ${SERVER.etcdDataDir} && chmod 0700 ${SERVER.etcdDataDir}`,
        reason: dataDir ? `data dir mode is ${formatMode(parseInt(dataDir, 8))}, want 0700` : 'data dir missing',
      });
    }
    changes.push(...fileChangesFrom(found, desired));
    // A new etcd binary restarts the member too.
    return withServiceChanges(found.services, ['etcd'], inputs, changes);
  },
  async verify(ctx) {
    // Converged members are checked by `hardway verify`; here, wait for one that just changed.
    if (ctx.applied.length === 0) return;
    const r = await ctx.facts.wait(etcdHealthy.ask(60));
    if (r.code !== 0) throw new CommandError(ctx.machine.hostname, etcdHealthCommand().text, r.code, r.stdout);
    ctx.log.info(r.stdout.trim());
  },
};
