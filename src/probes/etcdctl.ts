// etcdctl reads: probes of etcd over TLS with the client certificate hardway issued: its health (of the local
// member, or of every member) and the wait for it.
import { sh, type Command } from '../shell.ts';
import { etcdctl, waitEtcdCommand } from '../steps/support/etcd.ts';
import { probe, waitProbe } from './probe.ts';

/**
 * `etcdctl endpoint health` against the local member over TLS with client-certificate auth; with
 * `cluster`, against every member of the member list (each at its advertised client URL).
 */
export function etcdHealthCommand(cluster = false): Command {
  return cluster ? etcdctl(sh`endpoint health --cluster`) : etcdctl(sh`endpoint health`);
}

/** etcd's health as etcdctl says it (its error on the same stdout). */
export const etcdHealth = probe('etcd-health', (cluster: boolean) => sh`${etcdHealthCommand(cluster)} 2>&1`);

/** Waits (up to its seconds) until the local member reports healthy over TLS; says the last answer when it gives up. */
export const etcdHealthy = waitProbe('wait-etcd', (timeoutS: number) => sh`{ ${waitEtcdCommand(timeoutS)}; } 2>&1`);

