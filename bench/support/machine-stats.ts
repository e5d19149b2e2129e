// What the lab machines use and do, read on the host: memory (PSS of every process in a machine's
// cgroup), CPU (the machine's cgroup v2 cpu.stat) and tasks created inside the machine (its PID
// namespace's last pid, which every fork and thread advances).
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** Where lab machines' cgroups are (see src/lab/cgroups.ts). */
const NAMED = '/sys/fs/cgroup/systemd/hardway-lab';
const UNIFIED = '/sys/fs/cgroup/unified/hardway-lab';

/** nspawn machine names of a lab (unit = <lab>-<hostname>). */
export function labUnits(lab: string): string[] {
  return existsSync(NAMED) ? readdirSync(NAMED).filter((u) => u.startsWith(`${lab}-`)) : [];
}

function procsUnder(dir: string): number[] {
  const pids: number[] = [];
  const walk = (d: string) => {
    try {
      pids.push(...readFileSync(join(d, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean).map(Number));
      for (const e of readdirSync(d, { withFileTypes: true })) if (e.isDirectory()) walk(join(d, e.name));
    } catch {
      // the cgroup went away meanwhile
    }
  };
  walk(dir);
  return pids;
}

/** Proportional set size of every process of the lab's machines, in bytes (shared pages split fairly). */
export function labPssBytes(lab: string): number {
  let kb = 0;
  for (const u of labUnits(lab)) {
    for (const pid of procsUnder(join(NAMED, u))) {
      try {
        kb += Number(/^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'))?.[1] ?? 0);
      } catch {
        // exited
      }
    }
  }
  return kb * 1024;
}

/** The host's MemAvailable in bytes. */
export function memAvailable(): number {
  return Number(/^MemAvailable:\s+(\d+) kB/m.exec(readFileSync('/proc/meminfo', 'utf8'))![1]) * 1024;
}

/** CPU seconds used so far by the processes of each of the lab's machines. */
export function labCpuSeconds(lab: string): Map<string, number> {
  return new Map(labUnits(lab).map((u) => {
    try {
      return [u, Number(/^usage_usec (\d+)/m.exec(readFileSync(join(UNIFIED, u, 'cpu.stat'), 'utf8'))![1]) / 1e6];
    } catch {
      return [u, 0];
    }
  }));
}

/** Tasks each machine's PID namespace has handed out so far (its last pid; the probe itself adds a constant). */
export function labLastPids(lab: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const u of labUnits(lab)) {
    const init = procsUnder(join(NAMED, u)).find((p) => readFileSync(`/proc/${p}/status`, 'utf8').includes('\nNSpid:') &&
      /^NSpid:\s+\d+\s+1$/m.test(readFileSync(`/proc/${p}/status`, 'utf8')));
    if (init === undefined) continue;
    try {
      out.set(u, Number(execFileSync('nsenter', ['-t', String(init), '-p', '-m', 'cat', '/proc/sys/kernel/ns_last_pid'], { encoding: 'utf8' }).trim()));
    } catch {
      // the machine stopped
    }
  }
  return out;
}

/** Per-key difference of two readings (after - before), for the keys in both. */
export function delta(before: Map<string, number>, after: Map<string, number>): Map<string, number> {
  return new Map([...after].filter(([k]) => before.has(k)).map(([k, v]) => [k, v - before.get(k)!]));
}
