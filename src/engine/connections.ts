// Connections opened lazily, one per host, reused by every step of a run, closed at the end.
import type { Machine } from '../inventory.ts';
import type { Transport } from '../transport/types.ts';

/** Opens a transport to a machine of the inventory (the SSH transport in production). */
export type ConnectFn = (machine: Machine) => Promise<Transport>;
/** Opens the transport to the jumpbox itself (the local transport in production). */
export type ConnectLocalFn = () => Promise<Transport>;

/** The run's open connections. */
export interface ConnectionPool {
  machine(m: Machine): Promise<Transport>;
  local(): Promise<Transport>;
  /** Closes every connection that was opened; errors while closing are ignored. */
  closeAll(): Promise<void>;
}

/** A pool that connects on first use; a failed connection is forgotten so a later step may retry. */
export function connectionPool(connect: ConnectFn, connectLocal?: ConnectLocalFn): ConnectionPool {
  const open = new Map<string, Promise<Transport>>();
  const get = (key: string, make: () => Promise<Transport>) => {
    let p = open.get(key);
    if (!p) {
      p = Promise.resolve().then(make);
      open.set(key, p);
      p.catch(() => open.delete(key));
    }
    return p;
  };
  return {
    machine: (m) => get(`machine:${m.hostname}`, () => connect(m)),
    local: () =>
      get('local', () => {
        if (!connectLocal) throw new Error('no local transport available for the jumpbox');
        return connectLocal();
      }),
    async closeAll() {
      const all = [...open.values()];
      open.clear();
      await Promise.all(all.map(async (p) => (await p.catch(() => undefined))?.close().catch(() => undefined)));
    },
  };
}
