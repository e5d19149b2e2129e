// What the SSH options (-i, --accept-new-host-keys, -v) mean for a command that opens its own
// connections (doctor, etcd snapshot restore): the transport options they set, and with -v every
// connection event and remote command shown on stderr as it happens.
import { say, type CliContext } from '../cli/command.ts';
import { loggedTransport } from '../engine/logged-transport.ts';
import type { TransportOptions } from '../transport/open.ts';
import type { Transport } from '../transport/types.ts';

/** The transport options that -i, --accept-new-host-keys and -v give, for the project in `dir`. */
export function sshOptionsOf(ctx: CliContext, dir: string): TransportOptions {
  return {
    dir,
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
