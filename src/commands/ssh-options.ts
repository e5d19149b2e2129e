// How the command line's SSH options become the transport's: the same for every command that
// reaches machines (the remote commands, doctor, etcd snapshot restore, lab break).
import type { CliContext } from '../cli/command.ts';
import type { Inventory } from '../inventory.ts';
import type { TransportOptions } from '../transport/index.ts';

/** The transport options of a command run: the project, `-i` keys, `--accept-new-host-keys`, the environment (SSH agent) and the working directory. */
export function sshOptions(ctx: Pick<CliContext, 'values' | 'env' | 'cwd'>, inv: Pick<Inventory, 'dir'>): TransportOptions {
  return {
    dir: inv.dir,
    identityFiles: ctx.values.identity as string[] | undefined,
    acceptNewHostKeys: ctx.values['accept-new-host-keys'] === true,
    env: ctx.env,
    cwd: ctx.cwd,
  };
}
