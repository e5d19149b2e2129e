// The hosts of one run, each opened once: its logged transport and its facts, shared by the at-once
// plan and every step after it (the pool below keeps one connection per host).
import type { ClusterApi } from '../cluster-api/cluster-api.ts';
import { directFacts } from '../cluster-api/direct-facts.ts';
import type { Transport } from '../transport/types.ts';
import type { Logger } from '../ui/logger.ts';
import type { Redactor } from '../ui/redact.ts';
import type { ConnectionPool } from './connections.ts';
import { createFacts, type Facts } from './facts.ts';
import { loggedTransport } from './logged-transport.ts';
import type { RunLog } from './run-log.ts';
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
        if (!api || host.machine?.role !== 'control-plane') return { transport, facts };
        return { transport, facts: directFacts(facts, api, api.inv, host.machine, (line) => log.debug(line)) };
      });
      opened.set(host.name, p);
      // As the pool: a failed open is forgotten, so a later step may try again, unless it is kept.
      if (!opts.keepFailure) p.catch(() => opened.delete(host.name));
    }
    return p;
  };
}
