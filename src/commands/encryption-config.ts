// `hardway encryption-config`: pki/encryption-config.yaml, generated once and then kept, because a
// new key on rerun would make every secret already stored in etcd unreadable. The key is replaced
// only by `--rotate`, in stages that keep every Secret readable (src/commands/encryption-rotate.ts).
import { INVENTORY_OPTIONS, jsonOption, machinesFile, needsYes, say, SSH_OPTIONS, yesOption, type CliContext, type CommandModule } from '../cli/command.ts';
import { reportLines } from '../cli/json-output.ts';
import { writeEncryptionConfig } from '../certs/write-encryption-config.ts';
import { encryptionState } from '../certs/encryption-rotation.ts';
import { withRunLock } from '../lock.ts';
import { InputError } from '../errors.ts';
import { loadInventory } from '../inventory.ts';
import { printReport } from './print-report.ts';
import { distributeWouldChange } from './certs-ca.ts';
import { liveRotationDeps, rotateEncryptionKey, rotationPlan, rotationStatus } from './encryption-rotate.ts';

/** Creates the encryption config with a fresh random key if there is none; otherwise keeps it untouched. */
export const encryptionConfigCommand: CommandModule = {
  name: 'encryption-config',
  args: '[--rotate | --status]',
  details:
    'EncryptionConfiguration for secrets: aescbc with a random 32-byte key "key1", then identity. ' +
    'Written once to pki/encryption-config.yaml (mode 0600); a rerun keeps it byte for byte. ' +
    'The key is never printed.\n\n' +
    'With --rotate (and --yes), the key is replaced on the running cluster in four stages, each ' +
    'installed by hardway distribute (the API servers restart one control plane at a time): 1/4 add ' +
    '(a new key, key2 after key1, joins behind the one in use: it decrypts), 2/4 promote (it goes first: ' +
    'it encrypts), 3/4 rewrite (every Secret is written again through the API server, so etcd stores it ' +
    'under the new key), 4/4 drop (the old key leaves the config). One run does every stage that is left; ' +
    'where it is is read from pki/encryption-config.yaml, each stage first distributes what pki/ holds, ' +
    'so a run stopped anywhere is completed by running it again. --dry-run says which stage is next ' +
    'and what it would do; --status says which keys pki/ holds, in which order, and whether each ' +
    'control plane holds that config (asked as distribute --dry-run would; exit 1 when one does not).',
  options: {
    ...INVENTORY_OPTIONS,
    rotate: { type: 'boolean', description: 'replace the key on the running cluster: add, promote, rewrite every Secret, drop (see above)' },
    status: { type: 'boolean', description: 'the keys pki/ holds and whether each control plane holds that config' },
    'dry-run': { type: 'boolean', description: '--rotate: say which stage is next and what it would do; change nothing' },
    yes: yesOption('--rotate'),
    json: jsonOption('{ok, lines}, as printed without --json'),
    ...SSH_OPTIONS,
  },
  examples: [
    ['hardway encryption-config', 'write pki/encryption-config.yaml if it is not there (never a new key over an old one)'],
    ['hardway encryption-config --rotate --dry-run', 'which stage of a key rotation comes next, and what it would do'],
    ['hardway encryption-config --rotate --yes', 'replace the key: add, promote, rewrite every Secret, drop, each stage distributed'],
    ['hardway encryption-config --status', 'which keys pki/ holds, and whether every control plane holds them'],
  ],
  jsonFields: { lines: [] },
  run: (ctx) => reportLines(ctx, encryptionConfig),
};

/** `hardway encryption-config` once its options are read. */
async function encryptionConfig(ctx: CliContext): Promise<number> {
  const { values, stdout, stderr } = ctx;
  const rotate = values.rotate === true;
  const dryRun = values['dry-run'] === true;
  if (rotate && values.status === true) throw new InputError('--rotate and --status together', 'give --status to see where a rotation is, --rotate to go on with it');
  if (!rotate && (dryRun || values.yes === true)) throw new InputError(`${dryRun ? '--dry-run' : '--yes'} goes with --rotate only`, 'hardway encryption-config --rotate --dry-run');
  if (dryRun && values.yes === true) throw new InputError('--dry-run and --yes together', 'give --dry-run to see what it would do, --yes to do it');
  const inv = loadInventory(machinesFile(ctx));
  if (values.status === true) return rotationStatus(inv, ctx, distributeWouldChange);
  if (rotate) {
    const plan = rotationPlan(inv);
    if (dryRun) {
      for (const line of plan) say(stdout, line);
      return 0;
    }
    if (values.yes !== true) throw needsYes(ctx, 'encryption-config --rotate', `would replace the encryption key of every Secret (${encryptionState(inv.dir).state === 'one-key' ? 'a new rotation' : 'going on with the rotation under way'})`);
    return withRunLock(inv.dir, 'encryption-config', () => rotateEncryptionKey(inv, ctx, liveRotationDeps(inv, ctx)));
  }
  return withRunLock(inv.dir, 'encryption-config', async () => {
    printReport(writeEncryptionConfig(inv), { stdout, stderr });
    return 0;
  });
}
