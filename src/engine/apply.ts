// Applying one planned change through a machine's transport.
import { CommandError } from '../errors.ts';
import type { Transport } from '../transport/types.ts';
import type { Change } from './types.ts';
import type { Command } from '../shell.ts';
import { DEFAULT_OWNER } from './desired.ts';
import { describeWrite } from '../cluster-api/writes.ts';

/** Applies a change: `put` uploads atomically, `exec` runs and fails with command, exit code and stderr. */
export async function applyChange(transport: Transport, change: Change): Promise<void> {
  if (change.kind === 'put') {
    const source = Buffer.isBuffer(change.content) ? { data: change.content } : { file: change.content.file };
    await transport.upload(change.path, source, { mode: change.mode, owner: change.owner ?? DEFAULT_OWNER });
    return;
  }
  const opts = { ...(change.stdin !== undefined ? { stdin: change.stdin } : {}), ...(change.timeoutMs !== undefined ? { timeoutMs: change.timeoutMs } : {}) };
  const r = await transport.exec(change.cmd, Object.keys(opts).length ? opts : undefined);
  if (r.code !== 0) throw new CommandError(transport.machine, change.cmd.text, r.code, r.stderr, r.stdout);
}

/** One line describing a change for plans and logs (never shows content). */
export function describeChange(change: Change): string {
  return describeChangeAs(change, (cmd) => cmd.text);
}

/** describeChange with each command shown as the transport runs it (with sudo -n where the login is raised): for --dry-run. */
export function describeChangeAs(change: Change, shown: (cmd: Command) => string): string {
  if (change.kind === 'exec') return change.api ? `api: ${describeWrite(change.api)} (${change.reason})` : `run: ${shown(change.cmd)} (${change.reason})`;
  const mode = '0' + change.mode.toString(8);
  return `put ${change.path} ${mode} ${change.owner ?? DEFAULT_OWNER}${change.secret ? ' (secret)' : ''} (${change.reason})`;
}
