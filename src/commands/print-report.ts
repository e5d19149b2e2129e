// How certs, kubeconfigs and encryption-config show their report when run alone: every line on
// stdout (kept ones too; wrapped on a terminal), each warning on stderr.
import type { Writable } from 'node:stream';
import { say } from '../cli/command.ts';
import type { PkiReport } from '../certs/pki-report.ts';
import { terminalLines } from '../ui/wrap.ts';

/** Prints a pki/ report the way the command run alone shows it. */
export function printReport(report: PkiReport, io: { stdout: Writable; stderr: Writable }): void {
  for (const line of report.lines) for (const l of terminalLines(line.text, io.stdout)) say(io.stdout, l);
  for (const w of report.warnings) say(io.stderr, `warning: ${w}`);
}
