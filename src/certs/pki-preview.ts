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
import { RENEW_REASON } from './renew.ts';
import { doneLine, keptLine, type PkiLine, type PkiReport } from './pki-report.ts';

/** The parts of pki/ a preview covers: `certs` makes the certificates only; `up` all three. */
export type PkiPart = 'certificates' | 'kubeconfigs' | 'encryption-config';

/** What a preview is of: its parts (default all), and leaves `certs --renew` reissues anyway (their kubeconfigs are rewritten). */
export interface PreviewScope {
  parts?: readonly PkiPart[];
  renew?: ReadonlySet<string>;
}

/** The lines `up` would print for pki/, as "would ..." lines (kept files as kept lines); a CA that stops `certs` stops this too. */
export function previewPki(inv: Inventory, now: Date, scope: PreviewScope = {}): PkiReport {
  const parts = new Set(scope.parts ?? ['certificates', 'kubeconfigs', 'encryption-config']);
  const all = previewAll(inv, now, scope.renew);
  return { lines: all.filter((l) => parts.has(l.part)).map((l) => l.line), warnings: [] };
}

function previewAll(inv: Inventory, now: Date, renew: ReadonlySet<string> = new Set()): Array<{ part: PkiPart; line: PkiLine }> {
  const at = (p: string) => join(inv.dir, p);
  checkPkiDir(inv.dir);
  const lines: Array<{ part: PkiPart; line: PkiLine }> = [];
  const push = (part: PkiPart) => (line: PkiLine) => lines.push({ part, line });
  const cert = push('certificates');
  const kube = push('kubeconfigs');
  const enc = push('encryption-config');
  const existing = new Map<CaName, ExistingCa>();
  for (const ca of caIdentities()) {
    const found = existingCa(ca, readOptional(at(ca.files.crt)), readOptional(at(ca.files.key)), now);
    if (found) existing.set(ca.name, found);
    cert(found ? keptLine(`kept ${ca.name}`) : doneLine(`would issue ${ca.name} (new): every certificate it signs is issued with it`));
  }
  const ids = identitiesFor(inv);
  const specs = kubeconfigsFor(inv);
  assertDistinctFiles(ids, specs);
  const reissued = new Set<string>();
  for (const judged of judgeLeaves(inv, ids, existing, now)) {
    // A leaf --renew names is reissued although it is right, as ensureCertificates does.
    const leaf = judged.reasons.length === 0 && renew.has(judged.id.name) ? { ...judged, reasons: [RENEW_REASON] } : judged;
    if (leaf.reasons.length === 0) {
      cert(keptLine(`kept ${leaf.id.name}`));
      continue;
    }
    reissued.add(leaf.id.name);
    const key = leaf.kept ? 'keeping its key (it signs every service-account token)' : 'with a new key';
    cert(doneLine(leaf.fresh ? `would issue ${leaf.id.name} (new)` : `would reissue ${leaf.id.name} ${key}: ${leaf.reasons.join('; ')}`));
  }
  const caPem = readOptional(at(PKI.ca.crt));
  for (const spec of specs) {
    const current = readOptional(at(spec.file));
    const why = current === undefined ? 'missing'
      : caPem === undefined ? 'the CA is new'
        : reissued.has(spec.identity) ? `${spec.identity} is reissued`
          : renderKubeconfig(spec, { caPem, certPem: readOptional(at(spec.certificate.crt))!, keyPem: readOptional(at(spec.certificate.key))! }) !== current ? 'content differs'
            : undefined;
    kube(why ? doneLine(`would write ${spec.file} (${why})`) : keptLine(`kept ${spec.file}`));
  }
  const encryption = readOptional(at(PKI.encryptionConfig));
  const problem = encryption === undefined ? undefined : encryptionConfigProblem(encryption);
  if (encryption === undefined) enc(doneLine(`would write ${PKI.encryptionConfig} (new 32-byte key)`));
  else if (problem) enc(doneLine(`would stop: ${PKI.encryptionConfig} exists but ${problem} (hardway never replaces it)`));
  else enc(keptLine(`kept ${PKI.encryptionConfig}`));
  return lines;
}
