// Running one command on an open SSH connection: collects stdout/stderr and the exit status,
// feeds stdin, and kills the command and its channel when it outlives its time limit.
import type { Readable } from 'node:stream';
import type { Client, ClientChannel } from 'ssh2';
import type { Become } from '../cluster-settings.ts';
import type { Command } from '../shell.ts';
import { CommandTimeoutError, ConnectionLostError } from './errors.ts';
import { killTagged, sendKillSignal, taggedCommand } from './remote-kill.ts';
import type { ExecResult } from './types.ts';

/** The channel could not even be opened: the command never started, so it is safe to reconnect and retry. */
export class ChannelNotOpened extends Error {}

/** Signal numbers for reporting a signal death as a shell would (128 + n). */
const SIGNALS: Record<string, number> = { HUP: 1, INT: 2, QUIT: 3, ABRT: 6, KILL: 9, SEGV: 11, PIPE: 13, ALRM: 14, TERM: 15 };

/** Runs cmd on the client; resolves with code/stdout/stderr, rejects on timeout or a lost connection. */
export function execOnClient(
  client: Client,
  machine: string,
  cmd: Command,
  opts: { stdin?: string | Buffer | Readable; timeoutMs: number; become?: Become },
): Promise<ExecResult> {
  const become = opts.become ?? 'none';
  const { tag, wire } = taggedCommand(cmd.text, become);
  return new Promise((resolve, reject) => {
    const onOpen = (err: Error | undefined, channel: ClientChannel) => {
      if (err) return reject(new ChannelNotOpened(err.message));
      const out: Buffer[] = [];
      const errOut: Buffer[] = [];
      let code: number | undefined;
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        sendKillSignal(channel);
        channel.close();
        const stderr = Buffer.concat(errOut).toString('utf8');
        void killTagged(client, tag, become).then(() => reject(new CommandTimeoutError(machine, cmd.text, opts.timeoutMs, stderr)));
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
      const stdin = opts.stdin;
      if (stdin === undefined || typeof stdin === 'string' || Buffer.isBuffer(stdin)) {
        channel.end(stdin ?? undefined);
      } else {
        // A stream (an upload's file): the channel's window paces the reads; a read error ends the command.
        stdin.once('error', (e) => {
          errOut.push(Buffer.from(`reading the input failed: ${e.message}\n`));
          channel.close();
        });
        stdin.pipe(channel);
      }
    };
    try {
      client.exec(wire, onOpen);
    } catch (e) {
      // ssh2 throws synchronously when the socket is already gone.
      reject(new ChannelNotOpened((e as Error).message));
    }
  });
}
