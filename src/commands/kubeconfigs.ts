// `hardway kubeconfigs`: every kubeconfig in pki/, built from the certificates `hardway certs` made.
import { join } from 'node:path';
import { INVENTORY_OPTIONS, jsonOption, machinesFile, type CommandModule } from '../cli/command.ts';
import { reportLines } from '../cli/json-output.ts';
import { checkCertificates } from '../certs/check.ts';
import { readableCertificate } from '../certs/inspect.ts';
import { assertDistinctFiles, identitiesFor } from '../certs/identities.ts';
import { kubeconfigsFor, renderKubeconfig } from '../certs/kubeconfig.ts';
import { ensurePkiDir, narrowMode, readOptional, SECRET_MODE, writePkiFiles, type PkiWrite } from '../certs/pki-files.ts';
import { FailureError } from '../errors.ts';
import { withRunLock } from '../engine/lock.ts';
import { loadInventory, type Inventory } from '../inventory.ts';
import { doneLine, keptLine, type PkiLine, type PkiReport } from '../certs/pki-report.ts';
import { printReport } from './print-report.ts';
import { PKI } from '../layout.ts';

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

/** What `hardway kubeconfigs` does once it holds the project's lock (`up` runs it under its own). */
export function writeKubeconfigs(inv: Inventory): PkiReport {
  const lines: PkiLine[] = [];
  const specs = kubeconfigsFor(inv);
  assertDistinctFiles(identitiesFor(inv), specs);
  // Embed only certificates that are there and still match the inventory. Of the CA, only its
  // certificate is embedded: its key may be kept offline once the certificates are issued.
  const needed = new Set(specs.map((s) => s.identity));
  const caPem = readOptional(join(inv.dir, PKI.ca.crt));
  const caProblem = caPem === undefined ? 'certificate missing' : readableCertificate(caPem) ? undefined : 'certificate unreadable';
  const bad = checkCertificates(inv, new Date()).certificates.filter((c) => needed.has(c.name) && !c.ok);
  if (caProblem === 'certificate missing' && bad.length === needed.size && bad.every((c) => c.problems.includes('certificate missing'))) {
    throw new FailureError(`the kubeconfigs embed the certificates, and ${PKI.dir}/ has none yet`, 'run hardway certs');
  }
  const problems = [...(caProblem ? [`ca (${caProblem})`] : []), ...bad.map((c) => `${c.name} (${c.problems.join('; ')})`)];
  if (problems.length > 0) {
    throw new FailureError(`the kubeconfigs need certificates that are missing or out of date: ${problems.join(', ')}`, 'run hardway certs');
  }
  const at = (p: string) => join(inv.dir, p);
  const dirNote = ensurePkiDir(inv.dir);
  if (dirNote) lines.push(doneLine(dirNote));
  const writes: PkiWrite[] = [];
  for (const spec of specs) {
    const text = renderKubeconfig(spec, {
      caPem: caPem!, certPem: readOptional(at(spec.certificate.crt))!, keyPem: readOptional(at(spec.certificate.key))!,
    });
    if (readOptional(at(spec.file)) === text) {
      lines.push(keptLine(`kept ${spec.file}`));
      const note = narrowMode(at(spec.file), SECRET_MODE, spec.file);
      if (note) lines.push(doneLine(note));
    } else {
      writes.push({ pkiPath: spec.file, content: text, mode: SECRET_MODE });
      lines.push(doneLine(`written ${spec.file}`));
    }
  }
  // All at once: a failed write (no space) leaves every kubeconfig as it was.
  writePkiFiles(inv.dir, writes);
  return { lines, warnings: [] };
}
