// Host-wide kernel settings the lab needs. A kubelet sets vm.overcommit_memory, kernel.panic and
// kernel.panic_on_oops (and a few more) when it starts ("Failed to start ContainerManager: open
// /proc/sys/vm/overcommit_memory: read-only file system" otherwise); those are not namespaced, so a
// kubelet in a lab machine would change the whole host, and a machine's read-only /proc/sys stops
// it. The lab sets them itself, says so, records the values it found, and the last `lab down` on
// this host puts them back. The kubelet writes only values that differ, so it never touches them.
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FailureError } from '../errors.ts';
import { withFileLock } from '../lock.ts';

/** One host setting: the /proc/sys key, the value the lab needs, and what needs it. */
export interface HostSetting {
  key: string;
  value: string;
  why: string;
  /** A limit: the host keeps any value already at or above `value` (never lowered); else exact. */
  atLeast?: boolean;
}

/** True if the host's value `now` already serves the setting. */
export function satisfied(s: HostSetting, now: string): boolean {
  return s.atLeast ? Number(now) >= Number(s.value) : now === s.value;
}

/** What the kubelet (v1.20 to v1.32) sets at start, with the values it wants (pkg/kubelet/cm). */
export const KUBELET_HOST_SETTINGS: readonly HostSetting[] = [
  { key: 'vm.overcommit_memory', value: '1', why: 'the kubelet sets it at start' },
  { key: 'vm.panic_on_oom', value: '0', why: 'the kubelet sets it at start' },
  { key: 'kernel.panic', value: '10', why: 'the kubelet sets it at start' },
  { key: 'kernel.panic_on_oops', value: '1', why: 'the kubelet sets it at start' },
  { key: 'kernel.keys.root_maxkeys', value: '1000000', why: 'the kubelet sets it at start' },
  { key: 'kernel.keys.root_maxbytes', value: '25000000', why: 'the kubelet sets it at start' },
];

/** Where the host's original values and the labs that hold them are recorded (gone with a host reboot, as the settings are). */
export const HOST_STATE_DIR = '/run/hardway-lab';

interface HostRecord {
  /** The value each key had before the first lab changed it. */
  original: Record<string, string>;
  /** Labs (state directories) that need the settings; the last one out restores them. */
  holders: string[];
}

/** Reads and writes /proc/sys; replaced in tests. */
export interface Sysctl {
  get(key: string): string;
  set(key: string, value: string): void;
}

/** The host's real /proc/sys. */
export const PROC_SYS: Sysctl = {
  get: (key) => readFileSync(procPath(key), 'utf8').trim(),
  set: (key, value) => writeFileSync(procPath(key), `${value}\n`),
};

function procPath(key: string): string {
  return join('/proc/sys', ...key.split('.'));
}

/** Marks `holder` as needing the settings, sets what differs; returns one line per change made. */
export async function holdHostSettings(holder: string, settings: readonly HostSetting[] = KUBELET_HOST_SETTINGS, sys: Sysctl = PROC_SYS, dir = HOST_STATE_DIR): Promise<string[]> {
  return withRecordLock(dir, () => {
    const record = readRecord(dir);
    if (!record.holders.includes(holder)) record.holders.push(holder);
    const lines: string[] = [];
    try {
      for (const s of settings) {
        const now = sys.get(s.key);
        if (satisfied(s, now)) continue;
        if (!(s.key in record.original)) record.original[s.key] = now;
        setOrRefuse(sys, s, now);
        lines.push(`host setting ${s.key}: ${now} -> ${s.value} (${s.why}; put back when the last lab goes down)`);
      }
    } finally {
      writeRecord(dir, record); // what was changed before a refusal is put back by `lab down` too
    }
    return lines;
  });
}

// A host where /proc/sys is read-only (a container) or a key is missing: the lab stops before any
// machine boots, naming the exact setting, instead of machines that time out one by one.
function setOrRefuse(sys: Sysctl, s: HostSetting, now: string): void {
  try {
    sys.set(s.key, s.value);
  } catch (e) {
    throw new FailureError(`cannot set host setting ${s.key} to ${s.value} (it is ${now}): ${(e as Error).message}`,
      `the lab needs it (${s.why}): run "sysctl -w ${s.key}=${s.value}" as root where that is allowed, or start a smaller lab`);
  }
}

/**
 * Drops `holder` (and holders whose state directory is gone: a lab removed by hand); when none is
 * left, puts every recorded setting back. Returns one line per setting restored.
 */
export async function releaseHostSettings(holder: string, sys: Sysctl = PROC_SYS, dir = HOST_STATE_DIR, exists: (p: string) => boolean = existsSync): Promise<string[]> {
  return withRecordLock(dir, () => {
    const record = readRecord(dir);
    record.holders = record.holders.filter((h) => h !== holder && exists(h));
    if (record.holders.length > 0) {
      writeRecord(dir, record);
      return [];
    }
    const lines: string[] = [];
    for (const [key, value] of Object.entries(record.original)) {
      const now = sys.get(key);
      if (now !== value) {
        sys.set(key, value);
        lines.push(`host setting ${key}: ${now} -> ${value} (put back: no lab left on this host)`);
      }
    }
    rmSync(join(dir, 'host-settings.json'), { force: true });
    return lines;
  });
}

function readRecord(dir: string): HostRecord {
  try {
    const r = JSON.parse(readFileSync(join(dir, 'host-settings.json'), 'utf8')) as HostRecord;
    return { original: r.original ?? {}, holders: r.holders ?? [] };
  } catch {
    return { original: {}, holders: [] };
  }
}

function writeRecord(dir: string, record: HostRecord): void {
  const file = join(dir, 'host-settings.json');
  writeFileSync(`${file}.tmp`, JSON.stringify(record, null, 2) + '\n');
  renameSync(`${file}.tmp`, file);
}

// Two labs may start or stop at once: the record is read and written under hardway's file lock.
async function withRecordLock<T>(dir: string, fn: () => T): Promise<T> {
  mkdirSync(dir, { recursive: true });
  return withFileLock(join(dir, 'host-settings.lock'), 'lab host settings', fn, { pollMs: 50 });
}
