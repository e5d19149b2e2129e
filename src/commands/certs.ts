// `hardway certs` and `hardway certs check`: the CA and every certificate in pki/, on the jumpbox.
import { resolve } from 'node:path';
import { INVENTORY_OPTIONS, say, type CliCommand } from '../cli/command.ts';
import { checkCertificates, formatCheck } from '../certs/check.ts';
import { ensureCertificates } from '../certs/ensure.ts';
import { withRunLock } from '../engine/lock.ts';
import { loadInventory } from '../inventory.ts';
import { printReport } from './print-report.ts';

/** Creates the CAs once, then issues or reissues exactly the certificates that no longer match the inventory. */
export const certsCommand: CliCommand = {
  name: 'certs',
  summary: 'Create the CA and every certificate in pki/ (keeps what is still right)',
  details:
    'The CA and the etcd CA are made once and never replaced. A certificate is reissued only when ' +
    'its subject, names, usages, signing CA or key algorithm no longer match the inventory, its key ' +
    'does not match, or it expires within renewBeforeDays (cluster.yaml). One line per certificate: ' +
    'kept, issued or reissued with the reason. Key contents are never printed.',
  options: { ...INVENTORY_OPTIONS },
  async run({ values, stdout, stderr, cwd }) {
    const inv = loadInventory(resolve(cwd, values.machines as string));
    return withRunLock(inv.dir, 'certs', async () => {
      printReport(await ensureCertificates(inv, new Date()), { stdout, stderr });
      return 0;
    });
  },
};

/** Read-only check of every certificate: chain, key, subject, names, expiry. Exit 1 on any problem. */
export const certsCheckCommand: CliCommand = {
  name: 'certs check',
  summary: 'Check every certificate: chain, key, names, expiry',
  details:
    'For each CA and each certificate the inventory needs: it exists, is signed by its CA, its key ' +
    'matches and is mode 0600, its subject, names and usages match the inventory, and it has not ' +
    'expired (fewer than 30 days left is a warning). Exit 1 when anything is wrong.',
  options: {
    ...INVENTORY_OPTIONS,
    json: { type: 'boolean', description: 'print exactly one JSON object: {ok, certificates: [...]}' },
  },
  async run({ values, stdout, cwd }) {
    const inv = loadInventory(resolve(cwd, values.machines as string));
    const report = checkCertificates(inv, new Date());
    if (values.json) say(stdout, JSON.stringify(report, null, 2));
    else for (const line of formatCheck(report)) say(stdout, line);
    return report.ok ? 0 : 1;
  },
};
