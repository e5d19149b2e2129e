// Local commands for the lab (ip, mount, debootstrap, ssh-keygen...), run through zx so every
// interpolated value is quoted. A failure becomes a CommandError on machine 'local' with stderr.
import { $ } from 'zx';
import { CommandError } from '../errors.ts';
import { quote } from '../shell.ts';

/** Exit code and output of a local command that was allowed to fail. */
export interface LocalResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

type Arg = string | number | ReadonlyArray<string | number>;

/** The command line as a user could paste it, for error messages. */
export function describe(strings: TemplateStringsArray, values: Arg[]): string {
  let text = strings[0]!;
  values.forEach((v, i) => {
    text += (Array.isArray(v) ? v.map((x) => quote(x)).join(' ') : quote(v as string | number)) + strings[i + 1];
  });
  return text.trim();
}

/** Runs a local command and returns its result whatever the exit code. */
export async function tryLocal(strings: TemplateStringsArray, ...values: Arg[]): Promise<LocalResult> {
  const out = await $({ quiet: true, nothrow: true, stdio: ['ignore', 'pipe', 'pipe'] })(strings, ...values);
  return { code: out.exitCode, stdout: out.stdout, stderr: out.stderr };
}

/** Runs a local command; throws CommandError('local', command, code, stderr) when it fails. */
export async function local(strings: TemplateStringsArray, ...values: Arg[]): Promise<string> {
  const r = await tryLocal(strings, ...values);
  if (r.code !== 0) throw new CommandError('local', describe(strings, values), r.code, r.stderr, r.stdout);
  return r.stdout;
}
