// doctor --bundle reads each machine again after doctor's own batch: over the same connection
// (engine/connections.ts's pool), never a second one per machine. A machine that did not answer
// doctor is not tried again for the bundle: its failure is kept for the run.
import { connectionPool } from '../engine/connections.ts';
import type { Host } from '../engine/types.ts';
import type { Connect } from '../transport/index.ts';
import type { Transport } from '../transport/types.ts';

/** A connector whose transports stay open for every reader of the run, and what closes them all at its end. */
export interface SharedConnections {
  /** The host's one transport (its `close` is left to closeAll: a reader done with it does not end it for the next). */
  connect: Connect;
  /** Closes every connection opened; errors while closing are ignored. */
  closeAll(): Promise<void>;
}

/** Shares `connect`'s connections, one per host, among every reader of one doctor run. */
export function sharedConnections(connect: Connect): SharedConnections {
  const pool = connectionPool((host) => connect(host));
  return {
    connect: async (host) => keptOpen(await pool.open(host as Host, { keepFailure: true })),
    closeAll: () => pool.closeAll(),
  };
}

/** `t` with a close that leaves the connection to the pool. */
function keptOpen(t: Transport): Transport {
  return { machine: t.machine, exec: (cmd, opts) => t.exec(cmd, opts), upload: (path, source, opts) => t.upload(path, source, opts), close: async () => undefined };
}
