// `hardway kubeconfigs`: every kubeconfig in pki/, built from the certificates `hardway certs` made.
import { INVENTORY_OPTIONS, jsonOption, machinesFile, type CommandModule } from '../cli/command.ts';
import { reportLines } from '../cli/json-output.ts';
import { writeKubeconfigs } from '../certs/write-kubeconfigs.ts';
import { withRunLock } from '../lock.ts';
import { loadInventory } from '../inventory.ts';
import { printReport } from './print-report.ts';

/** Writes each kubeconfig whose content differs from what is there; keeps the rest byte for byte. */
export const kubeconfigsCommand: CommandModule = {
  name: 'kubeconfigs',
  details:
    'One per worker (its node identity), kube-proxy, kube-controller-manager, kube-scheduler, admin ' +
    '(for kubectl on the server, https://127.0.0.1) and jumpbox (your own, via the API server name). ' +
    'Cluster kubernetes-the-hard-way, context default, CA, certificate and key embedded, mode 0600. ' +
    'Needs the certificates: run "hardway certs" first.',
  options: { ...INVENTORY_OPTIONS, json: jsonOption('{ok, lines}: one line per kubeconfig, as printed without --json') },
  examples: [['hardway kubeconfigs', 'write the kubeconfigs that are missing or out of date (run "hardway certs" first)']],
  jsonFields: { lines: [] },
  run: (ctx) => reportLines(ctx, async ({ stdout, stderr, ...rest }) => {
    const inv = loadInventory(machinesFile(rest));
    return withRunLock(inv.dir, 'kubeconfigs', async () => {
      printReport(writeKubeconfigs(inv), { stdout, stderr });
      return 0;
    });
  }),
};
