// distribute: every machine gets exactly its own certificates, keys and kubeconfigs from pki/.
// Keys and kubeconfigs are 0600 and secret (never shown in plans or logs). The CA key goes only to
// control-plane machines; a worker gets its own node key and nothing else secret, and any
// control-plane secret found on a worker (from an earlier hand install) is removed. Only the
// services whose files changed restart; control-plane machines take turns, each API server ready
// again before the next machine starts (a rolling restart).
import type { DesiredFile } from '../engine/desired.ts';
import type { Change, ChangeStep, StepContext } from '../engine/types.ts';
import { sh } from '../shell.ts';
import { fileChangesFrom, inspect } from './support/inspect.ts';
import { NEVER_ON_WORKERS, placementContent, placements } from './support/placements.ts';
import { withRestarts, type ServiceInput } from './support/services.ts';
import { numberOption } from './options.ts';

/** The distribute step. */
export const distributeStep: ChangeStep = {
  name: 'distribute',
  title: 'Give every machine exactly its own certificates, keys and kubeconfigs',
  targets: (inv) => inv.machines,
  async plan(ctx: StepContext): Promise<Change[]> {
    const { inventory, machine, facts } = ctx;
    const wanted = placements(inventory, machine);
    const desired: DesiredFile[] = wanted.map((p) => ({
      path: p.to,
      content: placementContent(inventory, p),
      mode: p.secret ? 0o600 : 0o644,
      secret: p.secret,
    }));
    const forbidden = machine.role === 'worker' ? NEVER_ON_WORKERS : [];
    const inputs: ServiceInput[] = wanted.map((p) => ({ path: p.to, services: p.services }));
    const found = await inspect(facts, [...desired.map((d) => d.path), ...forbidden], [...new Set(inputs.flatMap((i) => i.services))]);
    const changes = fileChangesFrom(found, desired);
    const present = forbidden.filter((p) => found.files.get(p)!.exists);
    if (present.length > 0) {
      changes.push({ kind: 'exec', cmd: sh`rm -f ${present}`, reason: 'control-plane secrets do not belong on a worker' });
    }
    return withRestarts(found.services, inputs, changes, { apiTimeoutS: numberOption(ctx.options, 'api-timeout') });
  },
  // A rolling restart: etcd keeps its quorum and one API server at a time is away (each waits for /readyz).
  inTurns: (m) => m.role === 'control-plane',
};
