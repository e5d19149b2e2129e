// How certs, kubeconfigs and encryption-config show their report when run alone: every line on
// stdout (kept ones too), each warning on stderr.
import type { Writable } from 'node:stream';
import { say } from '../cli/command.ts';
import type { PkiReport } from '../certs/pki-report.ts';

/** Prints a pki/ report the way the command run alone shows it. */
export function printReport(report: PkiReport, io: { stdout: Writable; stderr: Writable }): void {
  for (const line of report.lines) say(io.stdout, line.text);
  for (const w of report.warnings) say(io.stderr, `warning: ${w}`);
}
