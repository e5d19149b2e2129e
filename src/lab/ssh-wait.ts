// Waiting for a booted machine: its sshd must accept the lab's key AND present the host key the
// lab recorded (system ssh, StrictHostKeyChecking=yes against the lab's known_hosts).
import { connect } from 'node:net';
import { existsSync, readFileSync } from 'node:fs';
import { FailureError } from '../errors.ts';
import { tryLocal } from './local.ts';
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

/** Waits until the machine answers over SSH with its recorded host key; fails early if nspawn died or the key differs. */
export async function waitForSsh(opts: {
  machine: LabMachine;
  sshConfigFile: string;
  alive: () => boolean;
  consoleLog: string;
  timeoutMs: number;
}): Promise<void> {
  const { machine: m } = opts;
  const deadline = Date.now() + opts.timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    if (!opts.alive()) {
      throw new FailureError(`${m.hostname}: systemd-nspawn exited while the machine was booting`,
        `its console says:\n${tail(opts.consoleLog)}`);
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
  throw new FailureError(`${m.hostname} (${m.ip}): no SSH answer within ${Math.round(opts.timeoutMs / 1000)} s`,
    `${last ? `last ssh error: ${last}\n` : ''}console log ${opts.consoleLog}:\n${tail(opts.consoleLog)}`);
}

function tail(file: string, lines = 15): string {
  if (!existsSync(file)) return '(no console log)';
  return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).map((l) => `    ${l}`).join('\n');
}
