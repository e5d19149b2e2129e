// `hardway up` makes what it distributes: certificates, kubeconfigs and the encryption config,
// with the same functions a user runs alone, each keeping what is already right. The caller holds
// the project's lock for the whole run, so pki/ cannot change between being made and being sent.
import type { Writable } from 'node:stream';
import { say } from '../cli/command.ts';
import { pkiMakers } from '../certs/make-pki.ts';
import type { Inventory } from '../inventory.ts';

/** Runs certs, kubeconfigs and encryption-config; prints what they created or changed, one summary line for what they kept. */
export async function preparePki(inv: Inventory, out: Writable): Promise<void> {
  let kept = 0;
  for (const make of pkiMakers(inv)) {
    const report = await make();
    for (const w of report.warnings) say(out, `warning: ${w}`);
    for (const line of report.lines) {
      if (line.kept) kept++;
      else say(out, `pki: ${line.text}`);
    }
  }
  say(out, `pki: ${kept} file(s) already up to date`);
}
