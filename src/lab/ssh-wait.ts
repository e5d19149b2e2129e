// Waiting for a booted machine: its sshd must accept the lab's key AND present the host key the
// lab recorded (the host connector, strict host keys against the lab's known_hosts).
import { connect } from 'node:net';
import { existsSync, readFileSync } from 'node:fs';
import { FailureError } from '../errors.ts';
import { bootJournal, limitHint, machineInit, sshdGaveUp } from './boot-journal.ts';
import { sh } from '../shell.ts';
import { HostKeyError } from '../transport/errors.ts';
import type { LabConnect } from './connect.ts';
import type { LabMachine } from './types.ts';

/** True if something accepts TCP connections on ip:port within the timeout. */
export function portOpen(ip: string, port: number, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: ip, port, timeout: timeoutMs });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.once('connect', () => done(true));
    socket.once('timeout', () => done(false));
    socket.once('error', () => done(false));
  });
}

/** What one SSH probe of a lab machine found; `hostKey`: it presented another key than the recorded one. */
export interface SshProbeResult {
  ok: boolean;
  stderr: string;
  hostKey?: true;
}

/** Runs `true` on the machine through the lab's connector (one attempt); the result says why not if it fails. */
export async function sshProbe(connect: LabConnect, m: LabMachine): Promise<SshProbeResult> {
  let t: Awaited<ReturnType<LabConnect>> | undefined;
  try {
    t = await connect(m);
    const r = await t.exec(sh`true`, { timeoutMs: 10_000 });
    return { ok: r.code === 0, stderr: r.stderr };
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    return e instanceof HostKeyError ? { ok: false, stderr: message, hostKey: true } : { ok: false, stderr: message };
  } finally {
    await t?.close().catch(() => undefined);
  }
}

/** After this long without an answer, the machine's systemd is asked whether sshd failed for good. */
const ASK_AFTER_MS = 30_000;
const ASK_EVERY_MS = 15_000; // not oftener: a big lab boots on a busy host, and each ask is a process

/**
 * Waits until the machine answers over SSH with its recorded host key; fails early if nspawn died,
 * the key differs or sshd failed for good. A failure carries the machine's own journal.
 */
export async function waitForSsh(opts: {
  machine: LabMachine;
  /** The lab's connector (labConnector with LAB_PROBE). */
  connect: LabConnect;
  /** The machine's nspawn pid while it runs, else undefined. */
  nspawnPid: () => number | undefined;
  /** The machine's root (its overlay mount), where its persistent journal is. */
  root: string;
  consoleLog: string;
  timeoutMs: number;
}): Promise<void> {
  const { machine: m } = opts;
  const started = Date.now();
  const deadline = started + opts.timeoutMs;
  let last = '';
  let asked = started + ASK_AFTER_MS - ASK_EVERY_MS;
  const fail = async (what: string, lead = '') => {
    const journal = await bootJournal(opts.root, machineInit(opts.nspawnPid()));
    const hint = limitHint(journal);
    throw new FailureError(`${m.hostname} (${m.ip}): ${what}${journal.length ? `; its journal says: ${journal.at(-1)}` : ''}`,
      [lead, hint ? `${hint}\n` : '', journal.length ? `the machine's journal, errors of its last boot:\n${journal.map((l) => `    ${l}`).join('\n')}\n` : '',
        `console log ${opts.consoleLog}:\n${tail(opts.consoleLog)}`].join(''));
  };
  while (Date.now() < deadline) {
    if (opts.nspawnPid() === undefined) await fail('systemd-nspawn exited while the machine was booting');
    if (Date.now() - asked >= ASK_EVERY_MS) {
      asked = Date.now();
      const gaveUp = await sshdGaveUp(machineInit(opts.nspawnPid()));
      if (gaveUp) await fail(gaveUp);
    }
    if (await portOpen(m.ip, 22, 1000)) {
      const probe = await sshProbe(opts.connect, m);
      if (probe.ok) return;
      last = probe.stderr.trim();
      if (probe.hostKey) {
        throw new FailureError(`${m.hostname} (${m.ip}) presented a host key that is not the one the lab recorded`, last);
      }
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  await fail(`no SSH answer within ${Math.round(opts.timeoutMs / 1000)} s`, last ? `last ssh error: ${last}\n` : '');
}

function tail(file: string, lines = 15): string {
  if (!existsSync(file)) return '(no console log)';
  return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).map((l) => `    ${l}`).join('\n');
}
