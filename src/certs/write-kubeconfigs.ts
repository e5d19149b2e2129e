// Every kubeconfig in pki/, from the certificates there: each written only when its content
// differs, all at once (a failed write leaves every kubeconfig as it was).
import { join } from 'node:path';
import { checkCertificates } from './check.ts';
import { readableCertificate } from './inspect.ts';
import { assertDistinctFiles, identitiesFor } from './identities.ts';
import { kubeconfigsFor, renderKubeconfig } from './kubeconfig.ts';
import { ensurePkiDir, narrowMode, readOptional, SECRET_MODE, writePkiFiles, type PkiWrite } from './pki-files.ts';
import { doneLine, keptLine, type PkiLine, type PkiReport } from './pki-report.ts';
import { FailureError } from '../errors.ts';
import type { Inventory } from '../inventory.ts';
import { PKI } from '../layout.ts';

/** What `hardway kubeconfigs` does once it holds the project's lock (`up` runs it under its own). */
export function writeKubeconfigs(inv: Inventory): PkiReport {
  const lines: PkiLine[] = [];
  const specs = kubeconfigsFor(inv);
  assertDistinctFiles(identitiesFor(inv), specs);
  // Embed only certificates that are there and still match the inventory. Of the CA, only its
  // certificate is embedded: its key may be kept offline once the certificates are issued.
  const needed = new Set(specs.map((s) => s.identity));
  const caPem = readOptional(join(inv.dir, PKI.ca.crt));
  const caKeyHere = readOptional(join(inv.dir, PKI.ca.key)) !== undefined;
  const caProblem = caPem === undefined ? 'certificate missing' : readableCertificate(caPem) ? undefined : 'certificate unreadable';
  const bad = checkCertificates(inv, new Date()).certificates.filter((c) => needed.has(c.name) && !c.ok);
  const nothingYet = bad.length === needed.size && bad.every((c) => c.problems.includes('certificate missing'));
  if (caProblem === 'certificate missing' && !caKeyHere && nothingYet) {
    throw new FailureError(`the kubeconfigs embed the certificates, and ${PKI.dir}/ has none yet`, 'run hardway certs');
  }
  const problems = [...(caProblem ? [`ca (${caProblem})`] : []), ...bad.map((c) => `${c.name} (${c.problems.join('; ')})`)];
  if (problems.length > 0) {
    throw new FailureError(`the kubeconfigs need certificates that are missing or out of date: ${problems.join(', ')}`, missingAdvice(caProblem, caKeyHere));
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

/**
 * What to do when a kubeconfig cannot be written. Never "run hardway certs" while a CA is there but
 * cannot be read or is half gone: certs refuses then (it never replaces a CA), and with both CA
 * files gone it would make a new CA that no machine trusts. With only pki/ca.key away (kept
 * offline), certs needs it back to reissue.
 */
function missingAdvice(caProblem: string | undefined, caKeyHere: boolean): string {
  const never = 'hardway never replaces a CA: every certificate, kubeconfig and running component trusts it';
  if (caProblem === 'certificate unreadable') return `${PKI.ca.crt} is unreadable: restore it from your backup of ${PKI.dir}/ (${never}), then run hardway kubeconfigs again`;
  if (caProblem === 'certificate missing') {
    return `restore ${PKI.ca.crt} from your backup of ${PKI.dir}/ (the certificates there were signed by it; ${never}), then run hardway kubeconfigs again`;
  }
  if (!caKeyHere) return `put ${PKI.ca.key} back in ${PKI.dir}/ (it is offline; hardway certs signs with it), run hardway certs, then hardway kubeconfigs`;
  return 'run hardway certs (it reissues what is missing or out of date), then hardway kubeconfigs';
}
