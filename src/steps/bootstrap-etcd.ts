// bootstrap-etcd: etcd on every control-plane machine, served over TLS with client-certificate
// authentication for clients and peers, member name = hostname, data directory 0700. Every
// control-plane line of machines.txt joins the same cluster. Waits until the member is healthy.
import { SERVER } from '../layout.ts';
import { fileChanges } from '../engine/desired.ts';
import { formatMode } from '../engine/facts.ts';
import type { Change, Step, StepContext } from '../engine/types.ts';
import { CommandError } from '../errors.ts';
import { sh } from '../shell.ts';
import { binaryFiles } from './support/binaries.ts';
import { etcdHealthCommand, waitEtcdHealthy } from './support/etcd.ts';
import { renderedFor } from './support/rendered.ts';
import { serviceChanges } from './support/services.ts';

/** The bootstrap-etcd step. */
export const bootstrapEtcdStep: Step = {
  name: 'bootstrap-etcd',
  title: 'Run etcd over TLS (client and peer certificates) on the control-plane machines',
  targets: (inv) => inv.controlPlanes,
  async plan(ctx: StepContext): Promise<Change[]> {
    const { inventory, machine, facts } = ctx;
    const binaries = await binaryFiles(inventory.dir, ['etcd', 'etcdctl'], SERVER.bin);
    const { files, inputs } = renderedFor(inventory, machine, 'bootstrap-etcd');
    const changes: Change[] = [];
    const dataDir = (await facts.probe({ d: sh`stat -c %a ${SERVER.etcdDataDir} 2>/dev/null` })).d.stdout.trim();
    if (dataDir !== '700') {
      changes.push({
        kind: 'exec',
        cmd: sh`install -d -m 0700 ${SERVER.etcdDataDir} && chmod 0700 ${SERVER.etcdDataDir}`,
        reason: dataDir ? `data dir mode is ${formatMode(parseInt(dataDir, 8))}, want 0700` : 'data dir missing',
      });
    }
    changes.push(...(await fileChanges(facts, [...binaries, ...files])));
    // A new etcd binary restarts the member too.
    const all = [...inputs, { path: `${SERVER.bin}/etcd`, services: ['etcd'] }];
    return [...changes, ...(await serviceChanges(facts, ['etcd'], all, changes))];
  },
  async verify(ctx) {
    const r = await ctx.transport.exec(waitEtcdHealthy(60));
    if (r.code !== 0) throw new CommandError(ctx.machine.hostname, etcdHealthCommand().text, r.code, r.stderr);
    ctx.log.info(r.stdout.trim());
  },
};
