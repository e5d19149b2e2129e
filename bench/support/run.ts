// Local processes for the benches: the hardway CLI, ssh and scp, each timed from spawn to exit.
import { execFile } from 'node:child_process';
import { setMaxListeners } from 'node:events';
import { bundleIsCurrent } from '../../bin/source-stamp.mjs';

/** What a finished local command left: exit code, output and wall time in seconds. */
export interface Ran {
  code: number;
  stdout: string;
  stderr: string;
  seconds: number;
}

/** The CLI entry point, as a user runs it. */
export const HARDWAY = new URL('../../bin/hardway.mjs', import.meta.url).pathname;

/** How the CLI starts here: the bundle from `npm run build`, or tsx when the bundle is missing or stale. */
export function cliLoader(): string {
  return bundleIsCurrent(new URL('../../', import.meta.url).pathname) ? 'bundle in dist/cli' : 'tsx (no current bundle: npm run build)';
}

/**
 * Aborted on Ctrl-C: running bench commands are killed and new ones fail at once, so the bench
 * reaches its `finally` and takes the labs down (with commands that are not stoppable).
 */
export const stopBench = new AbortController();
// Every process a bench runs listens on it (the manual loop runs one scp per machine at once).
setMaxListeners(0, stopBench.signal);

/** Where a command runs, and whether Ctrl-C stops it (teardown commands must not be stopped). */
export interface RunOptions {
  cwd?: string;
  stoppable?: boolean;
  /** The CLI's entry point for `hardway()`: another checkout's bin/hardway.mjs (a baseline); this checkout's by default. */
  entry?: string;
}

/** Runs a program with an argument array (no shell); never throws, the exit code is in the result. */
export function runTimed(file: string, args: string[], opts: RunOptions = {}): Promise<Ran> {
  const t0 = performance.now();
  const signal = opts.stoppable === false ? undefined : stopBench.signal;
  return new Promise((done) => {
    // CI=true: plain line output from hardway (no listr2 redraws) whatever the terminal.
    execFile(file, args, { cwd: opts.cwd, env: { ...process.env, CI: 'true' }, maxBuffer: 256 << 20, signal }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
      done({ code, stdout: String(stdout), stderr: String(stderr), seconds: (performance.now() - t0) / 1000 });
    });
  });
}

/** `hardway ARGS` in `opts.cwd` (the project directory, so machines.txt and cluster.yaml are found). */
export function hardway(args: string[], opts: RunOptions = {}): Promise<Ran> {
  return runTimed(process.execPath, [opts.entry ?? HARDWAY, ...args], opts);
}

/** Returns the result if the command exited 0, else throws with the command and its output. */
export function mustSucceed(r: Ran, what: string): Ran {
  if (r.code !== 0) {
    // stderr holds the reason: its end first, then the end of stdout.
    const last = (text: string, n: number) => text.trim().split('\n').slice(-n).join('\n');
    const tail = `${last(r.stderr, 40)}\n--- stdout:\n${last(r.stdout, 10)}`;
    throw new Error(`${what} failed (exit ${r.code}):\n${tail}`);
  }
  return r;
}

/** Seconds with one decimal, for tables. */
export const secs = (s: number): string => `${s.toFixed(1)} s`;
