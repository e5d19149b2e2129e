// `hardway certs` and `hardway certs check`: the CA and every certificate in pki/, on the jumpbox.
import { INVENTORY_OPTIONS, jsonOption, machinesFile, needsYes, say, SSH_OPTIONS, yesOption, type CliContext, type CommandModule } from '../cli/command.ts';
import { reportLines } from '../cli/json-output.ts';
import { checkCertificates, formatCheck } from '../certs/check.ts';
import { ensureCertificates } from '../certs/ensure.ts';
import { identitiesFor } from '../certs/identities.ts';
import { renewSelection } from '../certs/renew.ts';
import { terminalLines } from '../ui/wrap.ts';
import { InputError } from '../errors.ts';
import { writeKubeconfigs } from '../certs/write-kubeconfigs.ts';
import { renewCa, rotationWould } from './certs-ca.ts';
import { rotationStage } from '../certs/ca-rotation.ts';
import { caIdentities, type CaName } from '../certs/identities.ts';
import { closest, didYouMean } from '../suggest.ts';
import { previewPki } from '../certs/pki-preview.ts';
import { withRunLock } from '../lock.ts';
import { loadInventory } from '../inventory.ts';
import { printReport } from './print-report.ts';

/** Creates the CAs once, then issues or reissues exactly the certificates that no longer match the inventory. */
export const certsCommand: CommandModule = {
  name: 'certs',
  args: '[--renew [IDENTITY ...] | --renew-ca [etcd-ca] [--force]]',
  details:
    'The CA and the etcd CA are made once and never replaced. A certificate is reissued only when ' +
    'its subject, names, usages, signing CA or key algorithm no longer match the inventory, its key ' +
    'does not match, or it expires within renewBeforeDays (cluster.yaml). One line per certificate: ' +
    'kept, issued or reissued with the reason. Key contents are never printed.\n\n' +
    'With --renew, the named leaf certificates (all of them when none is named) get a new key and ' +
    'certificate although they are still right, and the kubeconfigs that embed them are rewritten; ' +
    'then "hardway distribute" installs them and restarts only the services that read them (control-plane ' +
    'machines one at a time, each API server ready before the next). IDENTITY is a name as printed ' +
    '(kube-api-server, node-0/kubelet, server/etcd-server) or a machine (its own certificates); a ' +
    'certificate\'s name wins, so for a machine named admin, admin is the certificate and admin/kubelet its own. ' +
    'A CA is never renewed by --renew. --renew without a name (every leaf) runs only with --yes.\n\n' +
    'With --renew-ca, the cluster CA is rotated in three runs, each followed by "hardway distribute": ' +
    'start (a new CA joins pki/ca.crt, a bundle trusted on every machine and in every kubeconfig; the ' +
    'old CA still signs), switch (the new CA signs and every certificate of the cluster CA is reissued; ' +
    'both are still trusted) and finish (the old CA leaves the bundle; its files stay in pki/ca-previous.*). ' +
    'Two phases for the components: both CAs trusted, then the old one removed. switch and finish are ' +
    'refused while any machine does not hold pki/\'s current files (what distribute --dry-run would change ' +
    'there, asked over SSH), so none meets a certificate it does not trust; --force goes ahead anyway. Each stage runs only with --yes. The etcd CA is not rotated.\n\n' +
    '--dry-run says what the run would issue, reissue or rotate, and writes nothing.',
  options: {
    ...INVENTORY_OPTIONS,
    renew: { type: 'boolean', description: 'reissue the named leaf certificates (every leaf when none is named), new keys included' },
    'renew-ca': { type: 'boolean', description: 'the next stage of a rotation of the cluster CA, or of the etcd CA with "etcd-ca" after it (start, switch, finish: see above)' },
    force: { type: 'boolean', description: '--renew-ca: go ahead although some machine does not hold pki/\'s current CA files' },
    'dry-run': { type: 'boolean', description: 'say what would be issued, reissued or rotated; write nothing' },
    yes: yesOption('--renew of every leaf certificate, or a stage of --renew-ca'),
    json: jsonOption('{ok, lines}: one line per certificate, as printed without --json'),
    ...SSH_OPTIONS,
  },
  examples: [
    ['hardway certs', 'make what is missing or out of date in pki/, keep the rest'],
    ['hardway certs --renew kube-api-server node-0/kubelet', 'new keys and certificates for these two; then run "hardway distribute"'],
    ['hardway certs --renew --dry-run', 'which certificates "--renew" with no name would reissue with new keys (every leaf)'],
    ['hardway certs --renew-ca --yes', 'the next stage of a rotation of the cluster CA (start, switch, finish)'],
    ['hardway certs --renew-ca etcd-ca --yes', 'the next stage of a rotation of the etcd CA (start, switch, finish)'],
  ],
  jsonFields: { lines: [] },
  run: (ctx) => reportLines(ctx, certs),
};

/** `hardway certs` once its options are read; prints its report on ctx.stdout. */
async function certs(ctx: CliContext): Promise<number> {
  const { values, positionals, stdout, stderr } = ctx;
  const renewing = values.renew === true;
  const dryRun = values['dry-run'] === true;
  if (dryRun && values.yes === true) throw new InputError('--dry-run and --yes together', 'give --dry-run to see what it would do, --yes to do it');
  if (values['renew-ca'] === true) {
    if (renewing || positionals.length > 1) throw new InputError('--renew-ca goes alone', 'renew the CA first (all its stages), leaves any time with --renew');
    const name = caNamed(positionals[0]);
    const inv = loadInventory(machinesFile(ctx));
    const stage = rotationStage(inv.dir, name);
    const command = `certs --renew-ca${name === 'ca' ? '' : ` ${name}`}`;
    if (dryRun) {
      say(stdout, `would ${rotationWould(stage, name)}; nothing was changed`);
      return 0;
    }
    if (values.yes !== true) throw needsYes(ctx, command, `would ${rotationWould(stage, name)}`);
    return withRunLock(inv.dir, 'certs', () => renewCa(inv, ctx, values.force === true, undefined, name));
  }
  if (values.force === true) throw new InputError('--force goes with --renew-ca only');
  if (!renewing && positionals.length > 0) {
    throw new InputError(`unexpected argument "${positionals[0]}"`, 'certificate names go with --renew: hardway certs --renew NAME ...');
  }
  const inv = loadInventory(machinesFile(ctx));
  // Checked before the lock and before any file: an unknown name changes nothing.
  const renew = renewing ? renewSelection(identitiesFor(inv), positionals) : undefined;
  const wouldRenew = `would reissue ${renew?.size ?? 0} certificate(s) with new keys although they are still right: ${[...(renew ?? [])].join(', ')}`;
  if (dryRun) {
    // Exactly what the run below writes: the certificates (kubeconfigs and the encryption config are
    // other commands'), and with --renew the kubeconfigs that embed a renewed certificate.
    const scope = renew ? { parts: ['certificates', 'kubeconfigs'] as const, renew } : { parts: ['certificates'] as const };
    for (const line of previewPki(inv, new Date(), scope).lines.filter((l) => !l.kept)) say(stdout, line.text);
    say(stdout, 'nothing was changed (--dry-run)');
    return 0;
  }
  // Every leaf at once is a new key on every machine: asked for twice, like the other destructive commands.
  if (renewing && positionals.length === 0 && values.yes !== true) throw needsYes(ctx, 'certs --renew', wouldRenew);
  return withRunLock(inv.dir, 'certs', async () => {
    // Keys are made before any line of the report: say first how many, so the seconds are not silence.
    const making = renew?.size ?? previewPki(inv, new Date(), { parts: ['certificates'] }).lines.filter((l) => !l.kept && /^would (re)?issue /.test(l.text)).length;
    if (making > 0) say(stdout, `making ${making} new key(s) and certificate(s) in pki/...`);
    printReport(await ensureCertificates(inv, new Date(), { ...(renew ? { renew } : {}) }), { stdout, stderr });
    if (renew) {
      // The kubeconfigs embed the client certificates: renewed ones must not keep the old.
      const written = writeKubeconfigs(inv);
      printReport({ ...written, lines: written.lines.filter((l) => !l.kept) }, { stdout, stderr });
      for (const l of terminalLines('next: hardway distribute (installs the renewed files and restarts only the services that read them)', stdout)) say(stdout, l);
    }
    return 0;
  });
}

/** The CA `--renew-ca` rotates: the cluster CA unless one is named (ca or etcd-ca); another name is a usage error. */
function caNamed(typed: string | undefined): CaName {
  const names = caIdentities().map((c) => c.name);
  if (typed === undefined) return 'ca';
  const found = names.find((n) => n === typed);
  if (found) return found;
  const near = didYouMean(closest(typed, names));
  throw new InputError(`--renew-ca: "${typed.slice(0, 40)}" is not a CA${near ? `; ${near}` : ''}`, `name one of ${names.join(', ')} (none: the cluster CA)`);
}

/** Read-only check of every certificate: chain, key, subject, names, expiry. Exit 1 on any problem. */
export const certsCheckCommand: CommandModule = {
  name: 'certs check',
  details:
    'For each CA and each certificate the inventory needs: it exists, is signed by its CA, its key ' +
    'matches and is mode 0600, its subject, names and usages match the inventory, and it has not ' +
    'expired. Fewer days left than renewBeforeDays (cluster.yaml, default 30) is a warning that names ' +
    'the fix (hardway certs --renew NAME && hardway distribute); so is a CA key kept offline (its ' +
    'certificate in pki/, its key not). Exit 1 when anything is wrong.',
  options: {
    ...INVENTORY_OPTIONS,
    json: jsonOption('{ok, problems: [...], certificates: [...]}'),
  },
  examples: [
    ['hardway certs check', 'check every certificate in pki/; exit 1 when one is wrong or expires soon'],
    ['hardway certs check --json', 'the same as one JSON object'],
  ],
  jsonFields: { problems: [], certificates: [] },
  async run(ctx) {
    const { values, stdout } = ctx;
    const inv = loadInventory(machinesFile(ctx));
    const report = checkCertificates(inv, new Date());
    if (values.json) say(stdout, JSON.stringify(report, null, 2));
    else for (const line of formatCheck(report)) say(stdout, line);
    return report.ok ? 0 : 1;
  },
};
