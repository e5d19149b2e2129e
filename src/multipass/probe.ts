// Reaching a VM over SSH the way hardway will: the project key, strict host-key checking against
// DIR/known_hosts. Reads the marker hardway wrote into the VM, so one probe proves three things:
// sshd presents the host key hardway made, root takes the project key, and it is hardway's launch.
import { join } from 'node:path';
import { tryLocal } from '../transport/local.ts';
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

/** The probe through the system ssh client. */
export const sshProbe: Probe = async (dir, hostname, ip) => {
  // HostKeyAlias: the key is looked up under the hostname (pinned in known_hosts), whatever the address.
  const r = await tryLocal`ssh -F ${join(dir, FILES.sshConfig)} -o BatchMode=yes -o ConnectTimeout=5 -o ${`HostName=${ip}`} -o ${`HostKeyAlias=${hostname}`} ${hostname} cat ${MARKER_FILE}`;
  const detail = r.stderr.trim().split('\n').filter((l) => !/^Warning: Permanently added/.test(l)).join('\n');
  if (r.code === 0) return { status: 'ok', marker: parseMarker(r.stdout) };
  if (/host key verification failed|REMOTE HOST IDENTIFICATION HAS CHANGED/i.test(detail)) return { status: 'host-key', detail };
  if (r.code === 1 && /No such file/i.test(detail)) return { status: 'no-marker', detail };
  return { status: 'unreachable', detail: detail || `ssh exited ${r.code}` };
};

/** Time, replaceable in tests. */
export interface Clock {
  now(): number;
  sleep(ms: number): Promise<void>;
}

/** The real clock. */
export const SYSTEM_CLOCK: Clock = { now: () => Date.now(), sleep: (ms) => new Promise((r) => setTimeout(r, ms)) };
