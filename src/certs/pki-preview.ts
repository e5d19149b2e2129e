// What `hardway up` would do in pki/, for `up --dry-run`: the CAs, certificates, kubeconfigs and
// encryption config it would make or remake, each with why, judged exactly as `hardway certs`
// judges them (ensure.ts). Reads only: no key is made, no file written, no mode changed.
import { join } from 'node:path';
import type { Inventory } from '../inventory.ts';
import { PKI } from '../layout.ts';
import { encryptionConfigProblem } from './encryption.ts';
import { existingCa, judgeLeaves, type ExistingCa } from './ensure.ts';
import { assertDistinctFiles, caIdentities, identitiesFor, type CaName } from './identities.ts';
import { kubeconfigsFor, renderKubeconfig } from './kubeconfig.ts';
import { checkPkiDir, readOptional } from './pki-files.ts';
import { doneLine, keptLine, type PkiLine, type PkiReport } from './pki-report.ts';

/** The lines `up` would print for pki/, as "would ..." lines (kept files as kept lines); a CA that stops `certs` stops this too. */
export function previewPki(inv: Inventory, now: Date): PkiReport {
  const at = (p: string) => join(inv.dir, p);
  checkPkiDir(inv.dir);
  const lines: PkiLine[] = [];
  const existing = new Map<CaName, ExistingCa>();
  for (const ca of caIdentities()) {
    const found = existingCa(ca, readOptional(at(ca.files.crt)), readOptional(at(ca.files.key)), now);
    if (found) existing.set(ca.name, found);
    lines.push(found ? keptLine(`kept ${ca.name}`) : doneLine(`would issue ${ca.name} (new): every certificate it signs is issued with it`));
  }
  const ids = identitiesFor(inv);
  const specs = kubeconfigsFor(inv);
  assertDistinctFiles(ids, specs);
  const reissued = new Set<string>();
  for (const leaf of judgeLeaves(inv, ids, existing, now)) {
    if (leaf.reasons.length === 0) {
      lines.push(keptLine(`kept ${leaf.id.name}`));
      continue;
    }
    reissued.add(leaf.id.name);
    const key = leaf.kept ? 'keeping its key (it signs every service-account token)' : 'with a new key';
    lines.push(doneLine(leaf.fresh ? `would issue ${leaf.id.name} (new)` : `would reissue ${leaf.id.name} ${key}: ${leaf.reasons.join('; ')}`));
  }
  const caPem = readOptional(at(PKI.ca.crt));
  for (const spec of specs) {
    const current = readOptional(at(spec.file));
    const why = current === undefined ? 'missing'
      : caPem === undefined ? 'the CA is new'
        : reissued.has(spec.identity) ? `${spec.identity} is reissued`
          : renderKubeconfig(spec, { caPem, certPem: readOptional(at(spec.certificate.crt))!, keyPem: readOptional(at(spec.certificate.key))! }) !== current ? 'content differs'
            : undefined;
    lines.push(why ? doneLine(`would write ${spec.file} (${why})`) : keptLine(`kept ${spec.file}`));
  }
  const encryption = readOptional(at(PKI.encryptionConfig));
  const problem = encryption === undefined ? undefined : encryptionConfigProblem(encryption);
  if (encryption === undefined) lines.push(doneLine(`would write ${PKI.encryptionConfig} (new 32-byte key)`));
  else if (problem) lines.push(doneLine(`would stop: ${PKI.encryptionConfig} exists but ${problem} (hardway never replaces it)`));
  else lines.push(keptLine(`kept ${PKI.encryptionConfig}`));
  return { lines, warnings: [] };
}
