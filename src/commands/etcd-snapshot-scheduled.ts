// `hardway etcd snapshot list|fetch`: the scheduled snapshots (etcd.snapshots in cluster.yaml) on
// the first control-plane machine, read over SSH; the work is in src/etcd-snapshot/scheduled.ts.
import { resolve } from 'node:path';
import { INVENTORY_OPTIONS, jsonOption, machinesFile, SSH_OPTIONS, type CliContext, type CommandModule } from '../cli/command.ts';
import { reportLines } from '../cli/json-output.ts';
import { InputError } from '../errors.ts';
import { loadInventory } from '../inventory.ts';
import { jumpboxEtcdctl } from '../etcd-snapshot/jumpbox-etcdctl.ts';
import { localStatus } from '../etcd-snapshot/save.ts';
import { fetchScheduled, listScheduled, type ScheduledRun } from '../etcd-snapshot/scheduled.ts';
import { checkIdentityFiles } from '../transport/auth.ts';
import { hostConnector, runCommand } from '../transport/index.ts';
import { shownTransport, sshOptions } from './ssh-options.ts';

/** The inventory and the SSH connection to the machine that takes the snapshots. */
function scheduledRun(ctx: CliContext): ScheduledRun {
  checkIdentityFiles(ctx.values.identity as string[] | undefined, ctx.cwd);
  const inventory = loadInventory(machinesFile(ctx));
  const connect = hostConnector(inventory, sshOptions(ctx, inventory));
  return { inventory, cwd: ctx.cwd, out: ctx.stdout, connect: async (m) => shownTransport(ctx, await connect({ name: m.hostname, machine: m }), m.hostname) };
}

/** `hardway etcd snapshot list`. */
export const etcdSnapshotListCommand: CommandModule = {
  name: 'etcd snapshot list',
  args: '',
  details: [
    'The snapshots the etcd-snapshots step\'s timer saved (etcd.snapshots in cluster.yaml: every, keep) on',
    'the first control-plane machine in /var/backups/etcd-snapshots, newest first: the time each was taken',
    '(UTC), its size and the revision etcd had then (etcdctl snapshot status there). Changes nothing.',
    '',
    'Exit codes: 0 listed (none is not an error), 1 the machine did not answer, 2 usage or input error.',
  ].join('\n'),
  options: { ...INVENTORY_OPTIONS, json: jsonOption('{ok, lines}, as printed without --json'), ...SSH_OPTIONS },
  examples: [['hardway etcd snapshot list', 'time, size and revision of each scheduled snapshot, newest first']],
  jsonFields: { lines: [] },
  run: (ctx) => reportLines(ctx, async (c) => {
    if (c.positionals.length) throw new InputError(`hardway etcd snapshot list takes no argument, got ${JSON.stringify(c.positionals[0]!.slice(0, 60))}`, 'hardway etcd snapshot list --help');
    await listScheduled(scheduledRun(c));
    return 0;
  }),
};

/** `hardway etcd snapshot fetch [NAME [FILE]]`. */
export const etcdSnapshotFetchCommand: CommandModule = {
  name: 'etcd snapshot fetch',
  args: '[NAME [FILE]]',
  details: [
    'Copies the scheduled snapshot NAME (default: the newest; "hardway etcd snapshot list" shows them) from',
    'the first control-plane machine to FILE, default backups/NAME in the project directory (a 0700',
    'directory with a .gitignore of *), mode 0600. The copy is checked (integrity hash, etcdctl snapshot',
    'status) before it gets its name, and never overwrites a file: "hardway etcd snapshot restore FILE"',
    'then takes it like a snapshot saved by hand. Nothing changes on any machine.',
    '',
    'Exit codes: 0 fetched, 1 the machine did not answer or the copy failed its check, 2 usage or input error.',
  ].join('\n'),
  options: { ...INVENTORY_OPTIONS, json: jsonOption('{ok, lines}, as printed without --json'), ...SSH_OPTIONS },
  examples: [
    ['hardway etcd snapshot fetch', 'the newest scheduled snapshot to backups/, mode 0600'],
    ['hardway etcd snapshot fetch etcd-snapshot-20261201T120000Z.db before-upgrade.db', 'that one, to before-upgrade.db'],
  ],
  jsonFields: { lines: [] },
  run: (ctx) => reportLines(ctx, async (c) => {
    const [name, file, ...extra] = c.positionals;
    if (extra.length) throw new InputError(`hardway etcd snapshot fetch takes NAME and FILE, got also ${extra.map((e) => JSON.stringify(e.slice(0, 60))).join(' ')}`, 'hardway etcd snapshot fetch --help');
    if (name === '' || file === '') throw new InputError('NAME or FILE is empty', 'hardway etcd snapshot fetch --help');
    const run = scheduledRun(c);
    const etcdctl = jumpboxEtcdctl(run.inventory, false);
    await fetchScheduled({
      ...run, name, now: new Date(), ...(file !== undefined ? { file: resolve(c.cwd, file) } : {}),
      status: (f) => localStatus({ run: (cmd) => runCommand(cmd, { timeoutMs: 10 * 60_000 }) }, etcdctl, f),
    });
    return 0;
  }),
};
