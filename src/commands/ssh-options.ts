// How the command line's SSH options (-i, --accept-new-host-keys, -v) become the transport's: the
// same for every command that reaches machines (the remote commands, doctor, etcd snapshot
// restore, lab break); for a command that opens its own connections, -v shows every connection
// event and remote command on stderr as it happens.
import { say, type CliContext } from '../cli/command.ts';
import { loggedTransport } from '../engine/logged-transport.ts';
import type { Inventory } from '../inventory.ts';
import type { TransportOptions } from '../transport/open.ts';
import type { Transport } from '../transport/types.ts';

/** The transport options of a command run: the project, `-i` keys, `--accept-new-host-keys`, the environment (SSH agent), the working directory, and with -v connection events on stderr. */
export function sshOptions(ctx: Pick<CliContext, 'values' | 'env' | 'cwd' | 'stderr'>, inv: Pick<Inventory, 'dir'>): TransportOptions {
  return {
    dir: inv.dir,
    identityFiles: ctx.values.identity as string[] | undefined,
    acceptNewHostKeys: ctx.values['accept-new-host-keys'] === true,
    env: ctx.env,
    cwd: ctx.cwd,
    ...(ctx.values.verbose === true ? { log: (line: string) => say(ctx.stderr, line) } : {}),
  };
}

/** With -v, a transport that shows each command it sends on stderr (`host: $ command`); else the transport itself. */
export function shownTransport(ctx: CliContext, t: Transport, host: string): Transport {
  if (ctx.values.verbose !== true) return t;
  const quiet = { path: '', write: () => undefined, close: () => undefined };
  return loggedTransport(t, { log: quiet, debug: (h, line) => say(ctx.stderr, `${h}: ${line}`) }, host);
}
