// etcdctl reads: probes of etcd over TLS with the client certificate hardway issued: its health (of the local
// member, or of every member) and the wait for it.
import { sh, type Command } from '../shell.ts';
import { etcdctl, waitEtcdCommand } from './etcd.ts';
import { probe, waitProbe, type ProbeAnswer } from './probe.ts';

/**
 * `etcdctl endpoint health` against the local member over TLS with client-certificate auth; with
 * `cluster`, against every member of the member list (each at its advertised client URL).
 */
export function etcdHealthCommand(cluster = false): Command {
  return cluster ? etcdctl(sh`endpoint health --cluster`) : etcdctl(sh`endpoint health`);
}

/** One member as its health was asked: its client URL, healthy or not, and why not (etcdctl's words after the colon, etcd's /health reason, or why it did not answer). */
export interface MemberHealth {
  url: string;
  healthy: boolean;
  why?: string;
}

/**
 * etcd's health: whether every member asked is healthy, each member's own answer, and, when not,
 * what was said last (etcdctl's last line; none when read from the members' /health).
 */
export interface EtcdHealth {
  ok: boolean;
  members: MemberHealth[];
  error?: string;
}

/** A member's line of `etcdctl endpoint health`: `URL is healthy: WHY` or `URL is unhealthy: WHY`. */
const MEMBER_LINE = /^(\S+) is (healthy|unhealthy)(?:: (.*))?$/;

/** etcdctl's answer read once: its members' lines, and its last line when it failed. */
export function readEtcdHealth(a: ProbeAnswer): EtcdHealth {
  const lines = a.stdout.trim().split('\n');
  const members = lines.flatMap((l) => {
    const m = MEMBER_LINE.exec(l);
    if (!m) return [];
    // A healthy member's words (how long its proposal took) differ from ask to ask: only why not is kept.
    return [m[2] === 'healthy' ? { url: m[1]!, healthy: true } : { url: m[1]!, healthy: false, why: m[3] ?? '' }];
  });
  return { ok: a.code === 0, members, ...(a.code === 0 ? {} : { error: lines.pop() ?? '' }) };
}

/** etcd's health (the local member, or with `cluster` every member of the member list). */
export const etcdHealth = probe('etcd-health', (cluster: boolean) => sh`${etcdHealthCommand(cluster)} 2>&1`, readEtcdHealth);

/**
 * Waits (up to its seconds) until the local member reports healthy over TLS; says the last answer
 * when it gives up. The raw answer: only a machine answers it (no other route), and its whole text
 * goes into the step's error as etcdctl said it.
 */
export const etcdHealthy = waitProbe('wait-etcd', (timeoutS: number) => sh`{ ${waitEtcdCommand(timeoutS)}; } 2>&1`);

