// The one way hardway reaches a host, for every command (the engine, doctor, etcd snapshot, lab
// break, the lab's and Multipass's waits and probes): known_hosts, identities, ProxyJump and retries are set up here once per run, and the kind
// of transport is chosen in one place (hostConnector): SSH to a machine of the inventory, the local
// transport for the jumpbox. The lab and Multipass reach their machines through it too
// (src/lab/connect.ts, src/multipass/probe.ts). Another kind (say `multipass exec`) is a file of its own in transport/
// and one line there.
import type { Inventory, Machine } from '../inventory.ts';
import { KnownHosts } from './known-hosts.ts';
import { LocalTransport } from './local.ts';
import { knownHostsPath, openTransport, type TransportOptions } from './open.ts';
import type { Transport } from './types.ts';

/** A host to reach: a machine of the inventory, or the jumpbox (no machine). */
export interface HostToReach {
  name: string;
  machine?: Machine;
  /**
   * Look the host key up (and pin it) under this name only, as ssh's HostKeyAlias: a machine probed
   * at an address that may have moved (a Multipass VM), whose key is pinned under its hostname.
   */
  hostKeyAlias?: string;
}

/** Opens a host's transport, connected; rejects with the transport's error (HostKeyError, AuthError, ConnectError). */
export type Connect = (host: HostToReach) => Promise<Transport>;

/** How persistently a command tries: the engine retries (default), doctor tries once and briefly (a machine that does not answer is a finding). */
export const ONE_ATTEMPT: Pick<TransportOptions, 'readyTimeoutMs' | 'retry'> = { readyTimeoutMs: 5_000, retry: { attempts: 1 } };

/**
 * The connector of a project: one known_hosts for every host of the run, the options of the
 * command. The kind of transport a host gets is chosen here, and only here.
 */
export function hostConnector(inv: Pick<Inventory, 'settings'>, opts: TransportOptions, progress?: (host: string, line: string) => void): Connect {
  const knownHosts = new KnownHosts(knownHostsPath(inv.settings.ssh, opts));
  return async (host) => {
    if (!host.machine) return new LocalTransport({ machine: host.name });
    // Connection progress (connecting, retrying) shown under the host's line while it waits.
    const shown = progress ? { ...opts, progress: (line: string) => progress(host.name, line) } : opts;
    return openTransport(host.machine, inv.settings.ssh, shown, knownHosts, host.hostKeyAlias);
  };
}

/**
 * The jumpbox's own transport outside a run's connector, for doctor's and its bundle's kubectl reads
 * of the API (the registry's probes asked on this machine): local, each command stopped after `commandTimeoutMs`.
 */
export function jumpboxTransport(commandTimeoutMs?: number): Transport {
  return new LocalTransport({ machine: 'jumpbox', commandTimeoutMs });
}
