// Runs the hardway CLI in-process and captures what it printed, for tests.
import { Writable } from 'node:stream';
import { main } from '../../src/cli.ts';

/** The outcome of one CLI run. */
export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Calls main() with captured stdout/stderr and the given working directory. */
export async function runCli(args: string[], cwd: string, env: NodeJS.ProcessEnv = process.env): Promise<CliRun> {
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
  });
  return { code, stdout, stderr };
}
