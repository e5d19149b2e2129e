// Killing a remote command that outlived its time limit. The `signal` channel request is refused by
// sshd for root logins ("session signalling requires privilege separation"), and a login raised
// with sudo runs its commands as root, out of reach of the user's signals, so every command runs
// with a random tag in its initial environment, which every process it starts inherits (forked
// subshells too), and a timeout runs a second command (raised as the first was) that kills every
// process carrying that tag.
import { randomBytes } from 'node:crypto';
import type { Client, ClientChannel } from 'ssh2';
import type { Become } from '../cluster-settings.ts';
import { quote } from '../shell.ts';
import { raisedText } from './become.ts';

/** Environment variable that marks the processes of one exec. */
export const TAG_VARIABLE = 'HARDWAY_EXEC';

/**
 * The text sent to sshd: the login shell re-executed with the tag in its environment, running the
 * command unchanged. (`export` in the shell would not do: /proc/PID/environ shows only the
 * environment a process was exec'd with, so forked subshells would not carry the tag.) With sudo,
 * sudo runs env, which runs /bin/sh: one `sudo -n` per command, tag in root's processes.
 */
export function taggedCommand(text: string, become: Become = 'none'): { tag: string; wire: string } {
  const tag = randomBytes(8).toString('hex');
  const run = become === 'sudo' ? `exec sudo -n env ${TAG_VARIABLE}=${tag} /bin/sh -c` : `exec env ${TAG_VARIABLE}=${tag} "\${SHELL:-/bin/sh}" -c`;
  return { tag, wire: `${run} ${quote(text)}` };
}

/** Shell text that SIGKILLs every process whose environment holds the tag (its own does not). */
export function killTaggedText(tag: string): string {
  return `for f in $(grep -lsxz -- '${TAG_VARIABLE}=${tag}' /proc/[0-9]*/environ); do ` +
    'p=${f#/proc/}; kill -KILL "${p%/environ}" 2>/dev/null; done; true';
}

/** Runs the kill command on its own channel; resolves when it finished or after waitMs, never rejects. */
export function killTagged(client: Client, tag: string, become: Become = 'none', waitMs = 5_000): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, waitMs);
    const done = () => {
      clearTimeout(timer);
      resolve();
    };
    try {
      client.exec(raisedText(killTaggedText(tag), become), (err, channel) => {
        if (err) return done();
        channel.on('close', done);
        channel.resume();
        channel.stderr.resume();
        channel.end();
      });
    } catch {
      done();
    }
  });
}

/**
 * Sends the `signal` request too, for servers that honour it (non-root logins get a killpg). ssh2's
 * channel.signal() sends nothing once stdin was closed with end(), which every exec does, so the
 * request goes through the protocol object (ssh2 is pinned to an exact version in package.json).
 */
export function sendKillSignal(channel: ClientChannel): void {
  const ch = channel as unknown as { outgoing?: { id: number; state: string }; _client?: { _protocol?: { signal?(id: number, name: string): void } } };
  try {
    const state = ch.outgoing?.state;
    if (state === 'open' || state === 'eof') ch._client?._protocol?.signal?.(ch.outgoing!.id, 'KILL');
  } catch {
    /* the connection is going away: the tag kill and closing the channel are all that is left */
  }
}
