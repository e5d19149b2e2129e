// Local commands of the download step (tar, apt-get, apt-cache, dpkg), run through zx with quoted
// arguments. A failure becomes a CommandError naming the command and its stderr.
import { $ } from 'zx';
import { CommandError } from '../errors.ts';
import { quote } from '../shell.ts';

/** Output of a local command that exited 0. */
export interface LocalResult {
  stdout: string;
  stderr: string;
}

/** Runs `cmd args...` (no shell), in `cwd` if given; throws CommandError('local', ...) on a non-zero exit. */
export async function runLocal(cmd: string, args: readonly string[], opts: { cwd?: string } = {}): Promise<LocalResult> {
  const r = await tryLocal(cmd, args, opts);
  if (r.code !== 0) throw new CommandError('local', [cmd, ...args].map(quote).join(' '), r.code, r.stderr, r.stdout);
  return r;
}

/** Runs a local command and returns its exit code with the output, whatever the code. */
export async function tryLocal(cmd: string, args: readonly string[], opts: { cwd?: string } = {}): Promise<LocalResult & { code: number | null }> {
  try {
    const p = await $({ quiet: true, nothrow: true, cwd: opts.cwd })`${cmd} ${args}`;
    return { code: p.exitCode, stdout: p.stdout, stderr: p.stderr };
  } catch (e) {
    // zx rejects even with nothrow when the program cannot be started at all (ENOENT).
    return { code: 127, stdout: '', stderr: (e as Error).message };
  }
}
