// How the lab reaches its machines: through the one host connector (src/transport/connector.ts),
// as every command does, with the lab directory's cluster.yaml (user, key, known_hosts) and its
// ssh_config, so it reaches them as `ssh -F DIR/ssh_config` would: strict host keys against the
// known_hosts the lab wrote, never a key pinned on first sight.
import { join } from 'node:path';
import { loadClusterSettings } from '../cluster-settings.ts';
import type { Machine } from '../inventory.ts';
import { hostConnector, type Connect } from '../transport/connector.ts';
import type { TransportOptions } from '../transport/open.ts';
import type { Transport } from '../transport/types.ts';
import { LAB_FILES } from './outputs.ts';
import type { LabMachine } from './types.ts';

/** Opens a lab machine's transport, connected; rejects with the transport's error (HostKeyError, AuthError, ConnectError). */
export type LabConnect = (m: LabMachine) => Promise<Transport>;

/** One attempt, briefly: the callers (the boot wait, status) poll or report on their own. */
export const LAB_PROBE: Pick<TransportOptions, 'readyTimeoutMs' | 'retry'> = { readyTimeoutMs: 3_000, retry: { attempts: 1 } };

/** A lab machine as the connector takes it (the registry machine, not in machines.txt, included: only its names and address count). */
export function labHost(m: LabMachine): Machine {
  return { ip: m.ip, fqdn: m.fqdn, hostname: m.hostname, role: m.role === 'control-plane' ? 'control-plane' : 'worker', ...(m.podSubnet ? { podSubnet: m.podSubnet } : {}), line: 0 };
}

/**
 * The connector of the lab in `dir`. cluster.yaml is read on the first connection (after `lab up`
 * wrote it), so a broken one fails that connection, which the caller reports like any other.
 */
export function labConnector(dir: string, opts: Omit<TransportOptions, 'dir'> = {}): LabConnect {
  let connect: Connect | undefined;
  return async (m) => {
    connect ??= hostConnector({ settings: loadClusterSettings(join(dir, LAB_FILES.cluster)) }, { dir, sshConfigFile: join(dir, LAB_FILES.sshConfig), ...opts });
    return connect({ name: m.hostname, machine: labHost(m) });
  };
}
