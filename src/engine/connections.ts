// Connections opened lazily, one per host, reused by every step of a run, closed at the end.
import type { Transport } from '../transport/types.ts';
import type { Host } from './types.ts';

/**
 * Opens the transport to a host: SSH to a machine of the inventory, the local transport for the
 * jumpbox (in production); the one place that tells the two apart.
 */
export type TransportFactory = (host: Host) => Promise<Transport>;

/** The run's open connections. */
export interface ConnectionPool {
  /**
   * The host's transport, opened on first use. `keepFailure`: a connection that fails stays failed
   * for the rest of the run (later opens fail at once instead of waiting through the retries again).
   */
  open(host: Host, opts?: { keepFailure?: boolean }): Promise<Transport>;
  /** Closes every connection that was opened; errors while closing are ignored. */
  closeAll(): Promise<void>;
}

/** A pool that connects on first use; a failed connection is forgotten (unless kept) so a later step may retry. */
export function connectionPool(factory: TransportFactory): ConnectionPool {
  const open = new Map<string, Promise<Transport>>();
  return {
    open(host, opts = {}) {
      let p = open.get(host.name);
      if (!p) {
        p = Promise.resolve().then(() => factory(host));
        open.set(host.name, p);
        if (!opts.keepFailure) p.catch(() => open.delete(host.name));
      }
      return p;
    },
    async closeAll() {
      const all = [...open.values()];
      open.clear();
      await Promise.all(all.map(async (p) => (await p.catch(() => undefined))?.close().catch(() => undefined)));
    },
  };
}
