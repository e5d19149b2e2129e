// `hardway up` makes what it distributes: certificates, kubeconfigs and the encryption config,
// with the same functions a user runs alone, each keeping what is already right. The caller holds
// the project's lock for the whole run, so pki/ cannot change between being made and being sent.
import type { Writable } from 'node:stream';
import { say } from '../cli/command.ts';
import { pkiMakers } from '../certs/make-pki.ts';
import { previewPki } from '../certs/pki-preview.ts';
import type { Inventory } from '../inventory.ts';
import { terminalLines } from '../ui/wrap.ts';

/** Runs certs, kubeconfigs and encryption-config; prints what they created or changed, one summary line for what they kept. */
export async function preparePki(inv: Inventory, out: Writable): Promise<void> {
  let kept = 0;
  for (const { what, make } of pkiMakers(inv)) {
    // A line before each group, so the seconds new keys take are not silence.
    say(out, `pki: checking ${what}...`);
    const report = await make();
    for (const w of report.warnings) say(out, `warning: ${w}`);
    for (const line of report.lines) {
      if (line.kept) kept++;
      else for (const l of terminalLines(`pki: ${line.text}`, out)) say(out, l);
    }
  }
  say(out, `pki: ${kept} file(s) already up to date`);
}

/** For `up --dry-run`, before any machine: what preparePki would create or change in pki/, and why; writes nothing. */
export function showPkiPlan(inv: Inventory, out: Writable): void {
  const { lines } = previewPki(inv, new Date());
  const changes = lines.filter((l) => !l.kept);
  for (const line of changes) for (const l of terminalLines(`pki: ${line.text}`, out)) say(out, l);
  say(out, `pki: ${lines.length - changes.length} file(s) already up to date${changes.length ? '; the steps below compare the machines with pki/ as it is now' : ''}`);
  // Without a CA, distribute has nothing to compare with: it, and what needs it, cannot be planned.
  if (changes.some((l) => l.text.startsWith('would issue ca '))) {
    say(out, 'pki: there is no CA yet, so distribute cannot plan: "hardway certs && hardway kubeconfigs && hardway encryption-config" makes pki/ (or run up without --dry-run)');
  }
}
