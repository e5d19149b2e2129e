// Runs the hardway CLI in-process and captures what it printed, for tests.
import { Writable } from 'node:stream';
import { main } from '../../src/cli.ts';

/** The outcome of one CLI run. */
export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Calls main() with captured stdout/stderr and the given working directory. Errors are not wrapped
 * (`errorWidth`), so a test compares a message whole; test/unit/cli-wrap.test.ts checks the wrapping.
 */
export async function runCli(args: string[], cwd: string, env: NodeJS.ProcessEnv = process.env, errorWidth = 100_000): Promise<CliRun> {
  let stdout = '';
  let stderr = '';
  const sink = (append: (s: string) => void) =>
    new Writable({
      write(chunk, _enc, done) {
        append(String(chunk));
        done();
      },
    });
  const code = await main(args, {
    stdout: sink((s) => (stdout += s)),
    stderr: sink((s) => (stderr += s)),
    cwd,
    env,
    errorWidth,
  });
  return { code, stdout, stderr };
}
