// Reaching a VM over SSH the way hardway will: through the one host connector, with DIR's
// cluster.yaml (the project key, strict host-key checking against DIR/known_hosts). Reads the
// marker hardway wrote into the VM, so one probe proves three things: sshd presents the host key
// hardway made, root takes the project key, and it is hardway's launch.
import { join } from 'node:path';
import { loadClusterSettings } from '../cluster-settings.ts';
import { sh } from '../shell.ts';
import { hostConnector, ONE_ATTEMPT } from '../transport/connector.ts';
import { HostKeyError } from '../transport/errors.ts';
import type { Transport } from '../transport/types.ts';
import { FILES } from './outputs.ts';
import { MARKER_FILE, parseMarker } from './user-data.ts';

/** What a probe found. */
export type ProbeResult =
  | { status: 'ok'; marker: ReturnType<typeof parseMarker> }
  /** sshd presented another host key than the pinned one. */
  | { status: 'host-key'; detail: string }
  /** Logged in, but no marker file (not launched by hardway, or cloud-init did not finish). */
  | { status: 'no-marker'; detail: string }
  | { status: 'unreachable'; detail: string };

/** Probes one VM at `ip` (its current address, which may differ from ssh_config's), under its hostname's pinned key. */
export type Probe = (dir: string, hostname: string, ip: string) => Promise<ProbeResult>;

/** The probe through the host connector (one attempt, 5 s), as every command reaches a machine. */
export const sshProbe: Probe = async (dir, hostname, ip) => {
  let t: Transport | undefined;
  try {
    const connect = hostConnector({ settings: loadClusterSettings(join(dir, FILES.cluster)) }, { dir, ...ONE_ATTEMPT });
    // hostKeyAlias: the key is looked up under the hostname (pinned in known_hosts), whatever the address.
    t = await connect({ name: hostname, machine: { ip, fqdn: hostname, hostname, role: 'worker', line: 0 }, hostKeyAlias: hostname });
    const r = await t.exec(sh`cat ${MARKER_FILE}`, { timeoutMs: 10_000 });
    const detail = r.stderr.trim();
    if (r.code === 0) return { status: 'ok', marker: parseMarker(r.stdout) };
    if (r.code === 1 && /No such file/i.test(detail)) return { status: 'no-marker', detail };
    return { status: 'unreachable', detail: detail || `cat ${MARKER_FILE} exited ${r.code}` };
  } catch (e) {
    const detail = e instanceof Error ? e.message : String(e);
    return e instanceof HostKeyError ? { status: 'host-key', detail } : { status: 'unreachable', detail };
  } finally {
    await t?.close().catch(() => undefined);
  }
};

/** Time, replaceable in tests. */
export interface Clock {
  now(): number;
  sleep(ms: number): Promise<void>;
}

/** The real clock. */
export const SYSTEM_CLOCK: Clock = { now: () => Date.now(), sleep: (ms) => new Promise((r) => setTimeout(r, ms)) };
