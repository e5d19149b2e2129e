// Why a lab machine did not come up, in its own words: its journal read from the host, and its
// systemd asked from the host. A timeout alone ("no SSH answer within 180 s") told nobody that 11
// machines of a 33-machine lab had logged "Failed to create inotify object: Too many open files".
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { tryLocal } from '../transport/local.ts';

/** One journal entry as `journalctl -o json` prints it (the fields used here). */
export interface JournalEntry {
  PRIORITY?: string;
  MESSAGE?: string | number[];
  SYSLOG_IDENTIFIER?: string;
  _PID?: string;
  /** The unit a process of the machine logged from (its stdout and stderr are info lines). */
  _SYSTEMD_UNIT?: string;
  /** The unit a message of systemd itself is about ("Failed to start ..."). */
  UNIT?: string;
  __MONOTONIC_TIMESTAMP?: string;
}

// Logged on every healthy boot of a lab machine: not a reason. The first two are journald finding no
// notify socket (nspawn --keep-unit without systemd on the host); the second is sshd seeing the
// lab's own port probe (a TCP connect that closes before the SSH banner).
const HARMLESS = [/^Failed to connect to notify socket/, /^Failed to send stream file descriptor to service manager/, /^error: kex_exchange_identification: Connection closed by remote host/,
  /^Connection closed by [\d.]+ port \d+ \[preauth\]/];

/** The machine's systemd (its init process, nspawn's child), or undefined when nspawn is gone. */
export function machineInit(nspawnPid: number | undefined): number | undefined {
  if (nspawnPid === undefined) return undefined;
  try {
    const first = readFileSync(`/proc/${nspawnPid}/task/${nspawnPid}/children`, 'utf8').trim().split(/\s+/)[0];
    return first ? Number(first) : undefined;
  } catch {
    return undefined;
  }
}

/** The machine's journal files: persistent in its root, and volatile in its /run while it runs (before journald flushed). */
export function journalFiles(root: string, init: number | undefined): string[] {
  const dirs = [join(root, 'var/log/journal'), ...(init !== undefined ? [`/proc/${init}/root/run/log/journal`] : [])];
  // Listed here, not globbed by journalctl: one pattern matching nothing (a flushed /run) fails the whole call.
  return dirs.flatMap((d) => list(d).flatMap((id) => list(join(d, id)).filter((f) => f.endsWith('.journal')).map((f) => join(d, id, f))));
}

function list(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

/**
 * The lines that say why a boot went wrong, oldest first: errors (else warnings) of the boot, and
 * what each unit that failed wrote itself (sshd's "Bad configuration option" is an info line of
 * ssh.service); lines every healthy boot logs are left out, a repeated one is said once. Pure.
 */
export function reasonLines(entries: JournalEntry[], max = 12): string[] {
  const text = (e: JournalEntry) => (Array.isArray(e.MESSAGE) ? Buffer.from(e.MESSAGE).toString('utf8') : String(e.MESSAGE ?? '')).trim();
  const priority = (e: JournalEntry) => Number(e.PRIORITY ?? 6);
  const telling = entries.filter((e) => text(e) !== '' && !HARMLESS.some((h) => h.test(text(e))));
  const failedUnits = new Set(telling.filter((e) => e.UNIT && /Failed with result|Failed to start/.test(text(e))).map((e) => e.UNIT!));
  const errors = telling.filter((e) => priority(e) <= 3);
  const ownWords = telling.filter((e) => e._SYSTEMD_UNIT && failedUnits.has(e._SYSTEMD_UNIT) && e.SYSLOG_IDENTIFIER !== 'systemd' && priority(e) <= 6);
  const chosen = new Set([...(errors.length > 0 ? errors : telling.filter((e) => priority(e) <= 4)), ...ownWords]);
  const t0 = Number(entries[0]?.__MONOTONIC_TIMESTAMP ?? 0);
  const counted = new Map<string, { line: string; n: number }>();
  for (const e of telling.filter((x) => chosen.has(x))) {
    const said = `${e.SYSLOG_IDENTIFIER ?? '?'}${e._PID ? `[${e._PID}]` : ''}: ${text(e)}`;
    const key = said.replace(/^([^[:]*)\[\d+\]:/, '$1:');
    const seen = counted.get(key);
    counted.delete(key); // re-inserted: the order is that of each message's last time
    const secs = ((Number(e.__MONOTONIC_TIMESTAMP ?? 0) - t0) / 1e6).toFixed(1);
    counted.set(key, { line: `[+${secs} s] ${said}`, n: (seen?.n ?? 0) + 1 });
  }
  return [...counted.values()].map((c) => (c.n > 1 ? `${c.line} (${c.n} times)` : c.line)).slice(-max);
}

/** The machine's journal of its last boot, as reason lines; empty when it has none the host can read. */
export async function bootJournal(root: string, init: number | undefined): Promise<string[]> {
  const files = journalFiles(root, init);
  if (files.length === 0) return [];
  const fields = 'PRIORITY,MESSAGE,SYSLOG_IDENTIFIER,_PID,_SYSTEMD_UNIT,UNIT';
  const r = await tryLocal`journalctl ${files.flatMap((f) => ['--file', f])} -b -o json --output-fields=${fields} --no-pager`;
  if (r.code !== 0) return [];
  const entries = r.stdout.split('\n').filter((l) => l.startsWith('{')).flatMap((l) => {
    try {
      return [JSON.parse(l) as JournalEntry];
    } catch {
      return [];
    }
  });
  return reasonLines(entries);
}

/**
 * Asked from the host in the machine's mount namespace: sshd's state as its systemd has it. Returns
 * a sentence when sshd failed for good (systemd will not start it again), else undefined.
 */
export async function sshdGaveUp(init: number | undefined): Promise<string | undefined> {
  if (init === undefined) return undefined;
  const r = await tryLocal`nsenter -t ${init} -m systemctl show -p ActiveState -p Result -p SubState ssh.service`;
  const state = Object.fromEntries(r.stdout.split('\n').filter((l) => l.includes('=')).map((l) => [l.split('=')[0], l.slice(l.indexOf('=') + 1)]));
  return state.ActiveState === 'failed' ? `sshd did not start (ssh.service ${state.ActiveState}, result ${state.Result})` : undefined;
}

/** A hint when the journal names a host limit the lab sets (said by `lab up`), else undefined. Pure. */
export function limitHint(lines: string[]): string | undefined {
  const text = lines.join('\n');
  if (/inotify/i.test(text)) {
    return 'the host ran out of inotify instances or watches (fs.inotify.max_user_instances / max_user_watches): ' +
      'too many machines for its limits; lab up raises them from the number of lab machines, so something lowered them since';
  }
  if (/Disk quota exceeded|EDQUOT/.test(text) && /keyring/i.test(text)) return 'the host ran out of kernel keys (kernel.keys.maxkeys / maxbytes)';
  if (/fork.*Resource temporarily unavailable/i.test(text)) return 'the host ran out of PIDs or threads (kernel.pid_max / kernel.threads-max)';
  return undefined;
}
