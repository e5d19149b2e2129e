// Waiting for a booted machine: its sshd must accept the lab's key AND present the host key the
// lab recorded (system ssh, StrictHostKeyChecking=yes against the lab's known_hosts).
import { connect } from 'node:net';
import { existsSync, readFileSync } from 'node:fs';
import { FailureError } from '../errors.ts';
import { bootJournal, limitHint, machineInit, sshdGaveUp } from './boot-journal.ts';
import { tryLocal } from '../transport/local.ts';
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

/** Runs `true` on the machine through the lab's ssh_config; the result says why not if it fails. */
export async function sshProbe(sshConfigFile: string, m: LabMachine): Promise<{ ok: boolean; stderr: string }> {
  const r = await tryLocal`ssh -F ${sshConfigFile} -o BatchMode=yes -o ConnectTimeout=3 ${m.hostname} true`;
  return { ok: r.code === 0, stderr: r.stderr };
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
  sshConfigFile: string;
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
      const probe = await sshProbe(opts.sshConfigFile, m);
      if (probe.ok) return;
      last = probe.stderr.trim();
      if (/host key verification failed|IDENTIFICATION HAS CHANGED/i.test(last)) {
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
