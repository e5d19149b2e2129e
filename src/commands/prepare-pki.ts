// `hardway up` makes what it distributes: certificates, kubeconfigs and the encryption config,
// with the same commands a user can run alone, each keeping what is already right.
import { Writable } from 'node:stream';
import { say, type CliContext } from '../cli/command.ts';
import { FailureError } from '../errors.ts';
import { certsCommand } from './certs.ts';
import { encryptionConfigCommand } from './encryption-config.ts';
import { kubeconfigsCommand } from './kubeconfigs.ts';

/** Runs certs, kubeconfigs and encryption-config; prints what they created or changed, one summary line otherwise. */
export async function preparePki(ctx: CliContext, out: Writable): Promise<void> {
  let kept = 0;
  for (const cmd of [certsCommand, kubeconfigsCommand, encryptionConfigCommand]) {
    const lines: string[] = [];
    const capture = new Writable({
      write(chunk, _enc, done) {
        lines.push(...String(chunk).split('\n').filter(Boolean));
        done();
      },
    });
    const code = await cmd.run({ ...ctx, values: { machines: ctx.values.machines }, stdout: capture, stderr: out });
    for (const line of lines) {
      if (line.startsWith('kept ')) kept++;
      else say(out, `pki: ${line}`);
    }
    if (code !== 0) throw new FailureError(`hardway ${cmd.name} failed (exit ${code}); nothing was sent to the machines`);
  }
  say(out, `pki: ${kept} file(s) already up to date`);
}
