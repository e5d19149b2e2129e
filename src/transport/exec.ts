// Running one command on an open SSH connection: collects stdout/stderr and the exit status,
// feeds stdin, and kills the channel when the command outlives its time limit.
import type { Client, ClientChannel } from 'ssh2';
import type { Command } from '../shell.ts';
import { CommandTimeoutError, ConnectionLostError } from './errors.ts';
import type { ExecResult } from './types.ts';

/** The channel could not even be opened: the command never started, so it is safe to reconnect and retry. */
export class ChannelNotOpened extends Error {}

/** Signal numbers for reporting a signal death as a shell would (128 + n). */
const SIGNALS: Record<string, number> = { HUP: 1, INT: 2, QUIT: 3, ABRT: 6, KILL: 9, SEGV: 11, PIPE: 13, ALRM: 14, TERM: 15 };

/**
 * Sends the `signal` channel request (sshd answers with killpg). ssh2's channel.signal() sends
 * nothing once stdin was closed with end(), which every exec does, so the request goes through the
 * protocol object directly (ssh2 is pinned to an exact version in package.json).
 */
function sendKill(channel: ClientChannel): void {
  const ch = channel as unknown as { outgoing?: { id: number; state: string }; _client?: { _protocol?: { signal?(id: number, name: string): void } } };
  try {
    const state = ch.outgoing?.state;
    if (state === 'open' || state === 'eof') ch._client?._protocol?.signal?.(ch.outgoing!.id, 'KILL');
  } catch {
    /* the connection is going away: closing the channel is all that is left */
  }
}

/** Runs cmd on the client; resolves with code/stdout/stderr, rejects on timeout or a lost connection. */
export function execOnClient(
  client: Client,
  machine: string,
  cmd: Command,
  opts: { stdin?: string | Buffer; timeoutMs: number },
): Promise<ExecResult> {
  return new Promise((resolve, reject) => {
    const onOpen = (err: Error | undefined, channel: ClientChannel) => {
      if (err) return reject(new ChannelNotOpened(err.message));
      const out: Buffer[] = [];
      const errOut: Buffer[] = [];
      let code: number | undefined;
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        // Ask sshd to kill the process group, then drop the channel so its slot is freed either way.
        sendKill(channel);
        channel.close();
        reject(new CommandTimeoutError(machine, cmd.text, opts.timeoutMs, Buffer.concat(errOut).toString('utf8')));
      }, opts.timeoutMs);
      channel.on('data', (d: Buffer) => out.push(d));
      channel.stderr.on('data', (d: Buffer) => errOut.push(d));
      channel.on('exit', (c: number | null, signal?: string) => {
        code = c ?? 128 + (SIGNALS[signal ?? ''] ?? 127);
      });
      channel.on('close', () => {
        clearTimeout(timer);
        if (timedOut) return;
        if (code === undefined) {
          return reject(new ConnectionLostError(machine, `command: ${cmd.text}`, 'the channel closed without an exit status'));
        }
        resolve({ code, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(errOut).toString('utf8') });
      });
      channel.end(opts.stdin ?? undefined);
    };
    try {
      client.exec(cmd.text, onOpen);
    } catch (e) {
      // ssh2 throws synchronously when the socket is already gone.
      reject(new ChannelNotOpened((e as Error).message));
    }
  });
}
