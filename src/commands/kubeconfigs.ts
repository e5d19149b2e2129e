// `hardway kubeconfigs`: every kubeconfig in pki/, built from the certificates `hardway certs` made.
import { resolve } from 'node:path';
import { INVENTORY_OPTIONS, type CliCommand } from '../cli/command.ts';
import { writeKubeconfigs } from '../certs/write-kubeconfigs.ts';
import { withRunLock } from '../engine/lock.ts';
import { loadInventory } from '../inventory.ts';
import { printReport } from './print-report.ts';

/** Writes each kubeconfig whose content differs from what is there; keeps the rest byte for byte. */
export const kubeconfigsCommand: CliCommand = {
  name: 'kubeconfigs',
  summary: 'Write every kubeconfig into pki/, certificates embedded',
  details:
    'One per worker (its node identity), kube-proxy, kube-controller-manager, kube-scheduler, admin ' +
    '(for kubectl on the server, https://127.0.0.1) and jumpbox (your own, via the API server name). ' +
    'Cluster kubernetes-the-hard-way, context default, CA, certificate and key embedded, mode 0600. ' +
    'Needs the certificates: run "hardway certs" first.',
  options: { ...INVENTORY_OPTIONS },
  async run({ values, stdout, stderr, cwd }) {
    const inv = loadInventory(resolve(cwd, values.machines as string));
    return withRunLock(inv.dir, 'kubeconfigs', async () => {
      printReport(writeKubeconfigs(inv), { stdout, stderr });
      return 0;
    });
  },
};
