// `hardway etcd snapshot save|restore`: the options, the wiring (the jumpbox's etcdctl, the SSH
// transport, the project lock and run log) and the exit codes; the work is in src/etcd-snapshot/.
import { resolve } from 'node:path';
import { INVENTORY_OPTIONS, jsonOption, machinesFile, needsYes, SSH_OPTIONS, yesOption, type CommandModule, type CliContext } from '../cli/command.ts';
import { reportLines } from '../cli/json-output.ts';
import { withRunLock } from '../lock.ts';
import { openRunLog } from '../ui/run-log.ts';
import { CommandError, InputError } from '../errors.ts';
import { loadInventory } from '../inventory.ts';
import { jumpboxEtcdctl } from '../etcd-snapshot/jumpbox-etcdctl.ts';
import { restoreSnapshot } from '../etcd-snapshot/restore.ts';
import { localStatus, saveSnapshot } from '../etcd-snapshot/save.ts';
import { shownPath } from '../etcd-snapshot/snapshot-file.ts';
import { hostConnector, runCommand } from '../transport/index.ts';
import { shownTransport, sshOptions } from './ssh-options.ts';
import { Redactor } from '../ui/redact.ts';
import { checkIdentityFiles } from '../transport/auth.ts';

/** The one FILE argument (absolute), if given; a usage error for more than one, or none when `required`. */
function positional(ctx: CliContext, command: string, required: boolean): string | undefined {
  const [file, ...extra] = ctx.positionals;
  if (extra.length) throw new InputError(`hardway ${command} takes one FILE, got also ${extra.map((e) => JSON.stringify(e.slice(0, 60))).join(' ')}`, `hardway ${command} --help`);
  if (required && file === undefined) throw new InputError(`hardway ${command} needs the snapshot FILE`, `e.g. hardway ${command} backups/etcd-snapshot-20261201T120000Z.db`);
  if (file === '') throw new InputError('FILE is empty', `hardway ${command} --help`);
  return file === undefined ? undefined : resolve(ctx.cwd, file);
}

/** `hardway etcd snapshot save [FILE]`. */
export const etcdSnapshotSaveCommand: CommandModule = {
  name: 'etcd snapshot save',
  args: '[FILE]',
  details: [
    'etcdctl from downloads/client asks one member (the first control-plane machine that answers, or',
    '--node) over TLS with pki/etcd-client.crt; the snapshot goes to FILE, default',
    'backups/etcd-snapshot-<UTC time>.db in the project directory (a 0700 directory with a .gitignore of *),',
    'mode 0600: it holds every secret of the cluster. FILE is checked (integrity hash, etcdctl snapshot',
    'status: revision, keys, size, hash) before it gets its name, and never overwritten. Nothing changes',
    'on any machine.',
    '',
    'Exit codes: 0 saved, 1 no member sent a valid snapshot, 2 usage or input error.',
  ].join('\n'),
  options: {
    ...INVENTORY_OPTIONS,
    node: { type: 'string', arg: 'NAME', description: 'the control-plane machine to ask (default: each in order until one answers)' },
    json: jsonOption('{ok, lines}, as printed without --json'),
  },
  examples: [
    ['hardway etcd snapshot save', 'to backups/etcd-snapshot-<UTC time>.db, mode 0600'],
    ['hardway etcd snapshot save before-upgrade.db --node server-1', 'to before-upgrade.db, asking server-1'],
  ],
  jsonFields: { lines: [] },
  run: (ctx) => reportLines(ctx, async (c) => {
    const file = positional(c, 'etcd snapshot save', false);
    const inventory = loadInventory(machinesFile(c));
    await saveSnapshot({ inventory, file, node: c.values.node as string | undefined, cwd: c.cwd, out: c.stdout, now: new Date(), run: (cmd) => runCommand(cmd, { timeoutMs: 30 * 60_000 }) });
    return 0;
  }),
};

/** `hardway etcd snapshot restore FILE`. */
export const etcdSnapshotRestoreCommand: CommandModule = {
  name: 'etcd snapshot restore',
  args: 'FILE',
  details: [
    'First checks FILE on the jumpbox (integrity hash, etcdctl snapshot status); a file that is not a',
    'snapshot is refused with exit 2 and nothing changed. Then, on every control-plane machine at once:',
    'copies it there (0600), stops the API servers, controller managers and schedulers, then etcd;',
    'restores each member (etcdctl snapshot restore with the names, peer URL, initial cluster and token',
    'its etcd unit uses), moves the old data directory aside to /var/lib/etcd.before-restore-<time> (never',
    'deleted), puts the restored one in place (0700), starts etcd on every member, then the control plane,',
    'and waits until each API server is ready. Workers are not touched. --dry-run prints every command.',
    'It replaces the cluster\'s whole state: it runs only with --yes (or shows its plan with --dry-run).',
    '',
    'Exit codes: 0 restored, 1 a machine failed (the message says what state the cluster is in), 2 usage or input error.',
  ].join('\n'),
  options: {
    ...INVENTORY_OPTIONS,
    'dry-run': { type: 'boolean', description: 'check FILE and print what the restore would do on each machine; change nothing' },
    yes: yesOption("every etcd member's data is replaced by the snapshot's (the old is kept aside)"),
    json: jsonOption('{ok, lines}, as printed without --json'),
    ...SSH_OPTIONS,
  },
  examples: [
    ['hardway etcd snapshot restore backups/etcd-snapshot-20261201T120000Z.db --dry-run', 'check the file and print every command the restore would run, changing nothing'],
    ['hardway etcd snapshot restore backups/etcd-snapshot-20261201T120000Z.db --yes', 'restore it on every control-plane machine'],
  ],
  jsonFields: { lines: [] },
  run: (ctx) => reportLines(ctx, restore),
};

/** `hardway etcd snapshot restore` once its options are read. */
async function restore(ctx: CliContext): Promise<number> {
  const file = positional(ctx, 'etcd snapshot restore', true)!;
  checkIdentityFiles(ctx.values.identity as string[] | undefined, ctx.cwd);
  const inventory = loadInventory(machinesFile(ctx));
  const dryRun = ctx.values['dry-run'] === true;
  const connect = hostConnector(inventory, sshOptions(ctx, inventory));
  return withRunLock(inventory.dir, 'etcd snapshot restore', async () => {
    await restoreSnapshot({
      inventory, file, cwd: ctx.cwd, dryRun, confirmed: ctx.values.yes === true, out: ctx.stdout, now: new Date(),
      refuse: (wouldDo) => needsYes(ctx, 'etcd snapshot restore', wouldDo),
      openLog: () => openRunLog(inventory.dir, 'etcd-snapshot-restore', new Redactor()),
      connect: async (m) => shownTransport(ctx, await connect({ name: m.hostname, machine: m }), m.hostname),
      // etcdctl's verdict on the file is about the user's input: exit 2, nothing changed.
      status: (f) => localStatus({ run: (cmd) => runCommand(cmd, { timeoutMs: 10 * 60_000 }) }, jumpboxEtcdctl(inventory, false), f).catch((e: unknown) => {
        if (!(e instanceof CommandError)) throw e;
        throw new InputError(`${shownPath(f, ctx.cwd)} is not an etcd snapshot: etcdctl snapshot status says: ${e.stderr.trim().split('\n').at(-1) ?? ''}`, 'give a file saved by "hardway etcd snapshot save"');
      }),
    });
    return 0;
  });
}
