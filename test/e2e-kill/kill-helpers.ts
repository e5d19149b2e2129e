/**
 * Machinery of the kill test (interrupt.test.ts): start hardway in a process group of its own,
 * follow its run log as it is written, SIGKILL the whole group at the line asked for, and read the
 * machines' files and services cheaply enough to do it 20 times.
 *
 * API
 *   startHardway(lab, args)        hardway ...args in a new process group (detached); { child, done }.
 *   killGroup(child)               SIGKILL to that whole process group.
 *   runJson(lab, args)             `hardway ...args --json` to its end: { exit, json? }.
 *   killAt(lab, args, trigger)     starts hardway, SIGKILLs its process group when the trigger fires;
 *                                  resolves { fired, line, step, host, hostLast, lastLines, exit, killMs }
 *                                  (never throws; fired=false when the run ended or timed out first).
 *       trigger = { log: RegExp, host?, step?, nth? }   the nth run-log entry of `host` (while its
 *                                                       current step is `step`) whose text matches
 *               | { pkiFile: 'pki/admin.key' }        that file appears in pki/ (pki/ is made before
 *                                                       the run log is opened, so its own writes are the signal)
 *   Machines                       reads machines over kept SSH connections: read(m, paths, texts,
 *                                  services) -> { files (stat + SHA-256, hashed again only when the stat
 *                                  changed), text, services (ActiveState, NeedDaemonReload, start time),
 *                                  temps (upload temp files `.NAME.hardway-tmp-*` left) }; run(m, cmd).
 *   reuseLab(dir)                  a Lab for a lab already up (HARDWAY_KILL_LAB_DIR), left up.
 */
import { execFile, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, fstatSync, mkdirSync, openSync, readdirSync, readFileSync, readSync, watch, type FSWatcher } from 'node:fs';
import { join } from 'node:path';
import { HARDWAY, hardway, labAt, type Lab, type RunResult } from '../e2e/helpers/lab.ts';
import { startCollected, type Exit, type Started } from '../e2e/helpers/spawn.ts';

export type { Exit, Started } from '../e2e/helpers/spawn.ts';

/** hardway ...args in the lab's directory, in a process group of its own (detached: setsid). */
export function startHardway(l: Lab, args: string[]): Started {
  return startCollected(process.execPath, [HARDWAY, ...args], { cwd: l.dir, detached: true });
}

/** SIGKILL to the whole process group of a started hardway (it and anything it spawned). */
export function killGroup(child: ChildProcess): void {
  try {
    process.kill(-child.pid!, 'SIGKILL');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ESRCH') throw e;
  }
}

/** `hardway ...args --json` run to its end; the parsed summary when stdout is JSON. */
export async function runJson(l: Lab, args: string[], timeoutMs = 600_000): Promise<{ exit: Exit; json?: { ok: boolean; changed: number; failed: number; results: { step: string; machine: string; status: string; changes: number; error?: string }[] } }> {
  const s = startHardway(l, [...args, '--json']);
  const timer = setTimeout(() => killGroup(s.child), timeoutMs);
  const exit = await s.done;
  clearTimeout(timer);
  try {
    return { exit, json: JSON.parse(exit.stdout) };
  } catch {
    return { exit };
  }
}

/** What fires a kill: a run-log entry, or a file of pki/ appearing. */
export type Trigger = { log: RegExp; host?: string; step?: string; nth?: number } | { pkiFile: string };

/** Where a kill landed. */
export interface Kill {
  fired: boolean;
  /** The log entry (or pki file) that fired the kill, without its timestamp. */
  line: string;
  /** The step the host was in (from the log's `HOST: STEP: plan has` lines), or `pki`. */
  step: string;
  host: string;
  /** The last entries (first lines only) of the log when the process was dead. */
  lastLines: string[];
  /** The last entry of the trigger's host when the process was dead: how far it got there. */
  hostLast: string;
  exit: Exit;
  /** ms from the trigger's line being seen to the process group being gone. */
  killMs: number;
}

/** One entry of a run log: `TIMESTAMP [HOST: ]TEXT` (continuation lines are indented). */
interface Entry {
  host?: string;
  text: string;
}

const ENTRY = /^(\d{4}-\d\d-\d\dT[\d:.]+Z) (.*)$/;

/** Reads a run log as it grows; yields whole entries (first line of each). */
class LogTail {
  private fd: number | undefined;
  private offset = 0;
  private rest = '';
  readonly entries: Entry[] = [];
  constructor(private readonly hosts: readonly string[]) {}

  /** Starts following `file` (once; later calls do nothing). */
  open(file: string): void {
    if (this.fd === undefined) this.fd = openSync(file, 'r');
  }

  /** Appends the entries written since the last read; returns the new ones. */
  read(): Entry[] {
    if (this.fd === undefined) return [];
    const size = fstatSync(this.fd).size;
    if (size <= this.offset) return [];
    const buf = Buffer.alloc(size - this.offset);
    readSync(this.fd, buf, 0, buf.length, this.offset);
    this.offset = size;
    const text = this.rest + buf.toString('utf8');
    const lines = text.split('\n');
    this.rest = lines.pop()!;
    const fresh: Entry[] = [];
    for (const line of lines) {
      const m = ENTRY.exec(line);
      if (!m) continue;
      const body = m[2]!;
      const colon = body.indexOf(': ');
      const host = colon > 0 ? body.slice(0, colon) : undefined;
      const entry = host && this.hosts.includes(host) ? { host, text: body.slice(colon + 2) } : { text: body };
      this.entries.push(entry);
      fresh.push(entry);
    }
    return fresh;
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }
}

/** The first line of an entry as the table shows it: `host: text`. */
export function entryLine(e: Entry): string {
  return `${e.host ? e.host + ': ' : ''}${e.text}`;
}

/**
 * Starts `hardway ...args`, follows what it does, and SIGKILLs its process group the moment the
 * trigger fires (inotify on the logs/ or pki/ directory, with a 20 ms poll behind it).
 */
export async function killAt(l: Lab, args: string[], trigger: Trigger, timeoutMs = 300_000): Promise<Kill> {
  const hosts = [...l.machines.map((m) => m.hostname), 'jumpbox'];
  const logs = join(l.dir, 'logs');
  const before = new Set(existsSync(logs) ? readdirSync(logs) : []);
  const tail = new LogTail(hosts);
  const step = new Map<string, string>();
  let seen = 0;
  let fired: { line: string; step: string; host: string; at: number } | undefined;
  const run = startHardway(l, args);
  let finished = false;
  void run.done.then(() => (finished = true));

  const check = () => {
    if (fired || finished) return;
    if ('pkiFile' in trigger) {
      if (existsSync(join(l.dir, trigger.pkiFile))) {
        fired = { line: `${trigger.pkiFile} written`, step: 'pki', host: 'jumpbox', at: Date.now() };
        killGroup(run.child);
      }
      return;
    }
    if (!existsSync(logs)) return;
    const file = readdirSync(logs).find((f) => !before.has(f) && f.endsWith('.log'));
    if (!file) return;
    tail.open(join(logs, file));
    for (const e of tail.read()) {
      if (e.host) {
        const plan = /^([a-z-]+): plan has /.exec(e.text);
        if (plan) step.set(e.host, plan[1]!);
      }
      if (trigger.host && e.host !== trigger.host) continue;
      if (trigger.step && step.get(e.host ?? '') !== trigger.step) continue;
      if (!trigger.log.test(e.text)) continue;
      if (++seen < (trigger.nth ?? 1)) continue;
      fired = { line: entryLine(e), step: step.get(e.host ?? '') ?? '-', host: e.host ?? '-', at: Date.now() };
      killGroup(run.child);
      return;
    }
  };
  const watchers: FSWatcher[] = [];
  const watchDir = (dir: string) => {
    try {
      watchers.push(watch(dir, () => check()));
    } catch {
      // not there yet: the poll covers it
    }
  };
  if ('pkiFile' in trigger) watchDir(join(l.dir, trigger.pkiFile, '..'));
  else watchDir(logs);
  const poll = setInterval(check, 20);
  const timer = setTimeout(() => killGroup(run.child), timeoutMs);
  const exit = await run.done;
  clearInterval(poll);
  clearTimeout(timer);
  for (const w of watchers) w.close();
  check();
  tail.read();
  tail.close();
  const lastLines = tail.entries.slice(-6).map(entryLine);
  if (!fired) return { fired: false, line: '(never fired)', step: '-', host: '-', lastLines, hostLast: '', exit, killMs: 0 };
  const own = tail.entries.filter((e) => (e.host ?? '-') === fired!.host);
  return { fired: true, ...fired, lastLines, hostLast: own.length ? entryLine(own.at(-1)!) : '', exit, killMs: Date.now() - fired.at };
}

/** A file on a machine as stat sees it, and its SHA-256 ('missing' when absent). */
export interface FileState {
  key: string;
  mtimeNs: bigint;
  sha256: string;
}

/** A systemd service as the test compares it. */
export interface ServiceInfo {
  active: string;
  needReload: boolean;
  /** ExecMainStartTimestamp in ns since the epoch (0n when never started). */
  startedNs: bigint;
}

/** One machine at one moment: files hardway installs, whole texts of the pinned files, services, temp files. */
export interface MachineState {
  files: Map<string, FileState>;
  text: Map<string, string>;
  services: Map<string, ServiceInfo>;
  temps: string[];
}

/** Where hardway installs anything: upload temp files are looked for under these. */
const INSTALL_DIRS = '/etc /usr/local/bin /opt/cni /var/lib/kubernetes /var/lib/kubelet /var/lib/kube-proxy /var/lib/hardway';

/**
 * Reads machines over SSH connections kept open between reads (ControlMaster): one command per
 * machine for stat, texts, services and temp files, and one more hashing only the files whose
 * stat (inode, size, mtime, ctime) changed since they were last hashed: an upload always brings a
 * new inode, so 20 rounds of reads cost seconds, not minutes of hashing binaries.
 */
export class Machines {
  private readonly cache = new Map<string, FileState>();
  private readonly control: string;
  constructor(private readonly l: Lab) {
    this.control = join(l.dir, '.ssh-control');
    mkdirSync(this.control, { recursive: true, mode: 0o700 });
  }

  /** Runs a command on a machine; throws with its stderr on a non-zero exit. */
  run(m: string, command: string): Promise<string> {
    const args = ['-F', this.l.sshConfig, '-o', 'BatchMode=yes', '-o', 'ControlMaster=auto', '-o', `ControlPath=${this.control}/%h`, '-o', 'ControlPersist=120', m, this.l.asRoot(command)];
    return new Promise((resolve, reject) => {
      execFile('ssh', args, { maxBuffer: 64 << 20 }, (err, stdout, stderr) => {
        if (err) reject(new Error(`${m}: command failed (${err.code}): ${command.slice(0, 200)}\n${stderr}`));
        else resolve(stdout);
      });
    });
  }

  /** Closes the kept connections. */
  async close(): Promise<void> {
    await Promise.all(this.l.machines.map((m) => new Promise<void>((resolve) => {
      execFile('ssh', ['-F', this.l.sshConfig, '-o', `ControlPath=${this.control}/%h`, '-O', 'exit', m.hostname], () => resolve());
    })));
  }

  /** The state of machine `m`: `paths` stat'ed and hashed, `texts` read whole, `services` from systemd. */
  async read(m: string, paths: readonly string[], texts: readonly string[], services: readonly string[]): Promise<MachineState> {
    const script = [
      'echo "== stat"',
      `for f in ${paths.map(q).join(' ')}; do stat -c '%i:%s:%.9Y:%.9Z %n' -- "$f" 2>/dev/null || echo "missing $f"; done`,
      ...texts.flatMap((t) => [`echo ${q(`== text ${t}`)}`, `base64 -w0 < ${q(t)}; echo`]),
      'echo "== services"',
      `systemctl show --timestamp=us+utc -p Id -p ActiveState -p NeedDaemonReload -p ExecMainStartTimestamp ${services.map((s) => `${s}.service`).join(' ')}`,
      'echo "== temps"',
      `find ${INSTALL_DIRS} -xdev -name '.*.hardway-tmp-*' 2>/dev/null || true`,
    ].join('\n');
    const out = await this.run(m, script);
    const sections = new Map<string, string>();
    let name = '';
    for (const line of out.split('\n')) {
      if (line.startsWith('== ')) sections.set((name = line.slice(3)), '');
      else sections.set(name, sections.get(name) + line + '\n');
    }
    const files = new Map<string, FileState>();
    const stale: string[] = [];
    for (const line of sections.get('stat')!.trim().split('\n').filter(Boolean)) {
      const sp = line.indexOf(' ');
      const key = line.slice(0, sp);
      const path = line.slice(sp + 1);
      if (key === 'missing') {
        files.set(path, { key, mtimeNs: 0n, sha256: 'missing' });
        continue;
      }
      const [sec, frac = '0'] = key.split(':')[2]!.split('.');
      const state = { key, mtimeNs: BigInt(sec!) * 1_000_000_000n + BigInt(frac.padEnd(9, '0')), sha256: '' };
      const hit = this.cache.get(`${m}:${path}`);
      if (hit && hit.key === key) state.sha256 = hit.sha256;
      else stale.push(path);
      files.set(path, state);
    }
    if (stale.length) {
      // A file may vanish between the two commands: hashed as missing then.
      const sums = await this.run(m, `for f in ${stale.map(q).join(' ')}; do sha256sum -- "$f" 2>/dev/null || echo "missing  $f"; done`);
      for (const line of sums.trim().split('\n')) {
        const sum = line.slice(0, line.indexOf(' '));
        files.get(line.slice(line.indexOf(' ') + 2))!.sha256 = sum;
      }
    }
    for (const [path, st] of files) if (st.sha256 !== 'missing') this.cache.set(`${m}:${path}`, st);
    const text = new Map(texts.map((t) => [t, Buffer.from(sections.get(`text ${t}`)!.trim(), 'base64').toString('utf8')]));
    const svc = new Map<string, ServiceInfo>();
    for (const block of sections.get('services')!.split(/\n\s*\n/)) {
      const p = Object.fromEntries(block.split('\n').filter((x) => x.includes('=')).map((x) => [x.slice(0, x.indexOf('=')), x.slice(x.indexOf('=') + 1)]));
      if (p.Id) svc.set(p.Id.replace(/\.service$/, ''), { active: p.ActiveState ?? '', needReload: p.NeedDaemonReload === 'yes', startedNs: usUtc(p.ExecMainStartTimestamp ?? '') });
    }
    return { files, text, services: svc, temps: sections.get('temps')!.split('\n').filter(Boolean) };
  }
}

/** `Tue 2026-12-01 01:11:22.656320 UTC` (systemd's --timestamp=us+utc) as ns since the epoch; 0n when empty. */
export function usUtc(text: string): bigint {
  const m = /(\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d)\.(\d{6}) UTC/.exec(text);
  if (!m) return 0n;
  return BigInt(Date.parse(`${m[1]}T${m[2]}Z`)) * 1_000_000n + BigInt(m[3]!) * 1000n;
}

/** POSIX single-quoting for the paths the test puts in a remote command. */
export function q(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/**
 * A lab that is already up (`hardway lab up --name e2e-kill --dir DIR`), used as is and left up:
 * for rerunning one point while working on it. The Lab of helpers/lab.ts, without lab up/down.
 */
export function reuseLab(dir: string): () => Lab {
  const l = labAt('e2e-kill', dir);
  l.down = async () => undefined;
  return () => l;
}
