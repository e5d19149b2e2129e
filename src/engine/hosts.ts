// The hosts of one run, each opened once: its logged transport and its facts, shared by the at-once
// plan and every step after it (the pool below keeps one connection per host).
import type { ClusterApi } from '../cluster-api/cluster-api.ts';
import { directFacts } from './direct-facts.ts';
import { directApply } from './direct-apply.ts';
import { applyChange } from './apply.ts';
import type { Change } from './types.ts';
import type { Transport } from '../transport/types.ts';
import type { Logger } from '../ui/logger.ts';
import type { Redactor } from '../ui/redact.ts';
import type { ConnectionPool } from './connections.ts';
import { createFacts, type Facts } from './facts.ts';
import { loggedTransport } from './logged-transport.ts';
import type { RunLog } from '../ui/run-log.ts';
import type { Host, StepOptions } from './types.ts';

/** The collaborators a run needs; tests pass fakes. */
export interface EngineDeps {
  pool: ConnectionPool;
  logger: Logger;
  runLog: RunLog;
  redactor: Redactor;
  /** The run's direct route to the API server and etcd, when pki/ has the admin certificate (src/cluster-api/). */
  clusterApi?: ClusterApi;
}

/** An open host: every command lands in the run log, fact reads too (with -v they are shown). */
export interface OpenHost {
  transport: Transport;
  facts: Facts;
  /** Applies a change: through the transport, or (a change with an API write on the first control plane) from here to its API server. */
  apply(change: Change): Promise<void>;
  /** The changes as they will be made: without their API writes where the API server is not asked directly. */
  route(changes: Change[]): Change[];
}

/** Opens a host for this run, once; `keepFailure`: see ConnectionPool.open. */
export type RunHosts = (host: Host, opts?: { keepFailure?: boolean }) => Promise<OpenHost>;

/** The run's hosts: the first open of a host makes its transport and facts, later ones get the same. */
export function runHosts(options: StepOptions, deps: EngineDeps): RunHosts {
  const opened = new Map<string, Promise<OpenHost>>();
  const debug = options.verbose ? (h: string, line: string) => deps.logger.host(h).debug(line) : undefined;
  return (host, opts = {}) => {
    let p = opened.get(host.name);
    if (!p) {
      p = deps.pool.open(host, opts).then((t) => {
        const transport = loggedTransport(t, { log: deps.runLog, debug }, host.name);
        const log = deps.logger.host(host.name);
        const facts = createFacts(transport, (line) => log.debug(line), { cacheWrites: !options.dryRun });
        // A control plane's cluster probes (kubectl, etcdctl there) are answered from here when the endpoints answer.
        const api = deps.clusterApi;
        const direct = api && host.machine?.role === 'control-plane' ? directApply(api, host.machine, transport, (line) => log.debug(line)) : undefined;
        if (!api || !direct) return { transport, facts, apply: (c) => applyChange(transport, c), route: withoutApiWrites };
        return { transport, facts: directFacts(facts, api, api.inv, host.machine!, (line) => log.debug(line)), ...direct };
      });
      opened.set(host.name, p);
      // As the pool: a failed open is forgotten, so a later step may try again, unless it is kept.
      if (!opts.keepFailure) p.catch(() => opened.delete(host.name));
    }
    return p;
  };
}

/** Changes whose API writes are left to their kubectl commands (no direct route on this host). */
export function withoutApiWrites(changes: Change[]): Change[] {
  return changes.map((c) => (c.kind === 'exec' && c.api ? (({ api: _api, ...rest }) => rest)(c) : c));
}
