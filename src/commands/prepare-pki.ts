// `hardway up` makes what it distributes: certificates, kubeconfigs and the encryption config,
// with the same code a user runs alone, each keeping what is already right. The caller holds the
// project's lock for the whole run, so pki/ cannot change between being made and being sent.
import { Writable } from 'node:stream';
import { say } from '../cli/command.ts';
import { FailureError } from '../errors.ts';
import type { Inventory } from '../inventory.ts';
import { makeCertificates } from './certs.ts';
import { writeEncryptionConfig } from './encryption-config.ts';
import { writeKubeconfigs } from './kubeconfigs.ts';

/** Runs certs, kubeconfigs and encryption-config; prints what they created or changed, one summary line otherwise. */
export async function preparePki(inv: Inventory, out: Writable): Promise<void> {
  let kept = 0;
  const parts: Array<[string, (stdout: Writable) => Promise<number>]> = [
    ['certs', (stdout) => makeCertificates(inv, { stdout, stderr: out })],
    ['kubeconfigs', (stdout) => writeKubeconfigs(inv, stdout)],
    ['encryption-config', (stdout) => writeEncryptionConfig(inv, stdout)],
  ];
  for (const [name, run] of parts) {
    const lines: string[] = [];
    const capture = new Writable({
      write(chunk, _enc, done) {
        lines.push(...String(chunk).split('\n').filter(Boolean));
        done();
      },
    });
    const code = await run(capture);
    for (const line of lines) {
      if (line.startsWith('kept ')) kept++;
      else say(out, `pki: ${line}`);
    }
    if (code !== 0) throw new FailureError(`hardway ${name} failed (exit ${code}); nothing was sent to the machines`);
  }
  say(out, `pki: ${kept} file(s) already up to date`);
}
