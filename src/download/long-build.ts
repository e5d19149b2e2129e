// One way to run a build that takes minutes (make for Kubernetes, go build for CoreDNS): its output
// to a log file, the lines that show progress to the user with the seconds since the start, a line
// now and then when it prints nothing for long, and the last lines of its output when it fails.
import { writeFile } from 'node:fs/promises';
import { FailureError } from '../errors.ts';
import { sh } from '../shell.ts';
import { runCommand } from '../transport/local.ts';

/** A long build: the command, where its output goes, and how it reports. */
export interface LongBuild {
  command: string;
  args: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Every byte the build printed is written here when it ends. */
  logFile: string;
  /** The progress line an output line gives, or undefined (the line only goes to the log). */
  progressOf: (line: string) => string | undefined;
  /** What to say when nothing was said for a minute. */
  quiet: string;
  /** What is built, for the failure message ("building Kubernetes"). */
  what: string;
  /** The hint of the failure. */
  hint: string;
  /** Receives each progress line, already prefixed with the seconds since the start. */
  log: (line: string) => void;
  /** When the build started (ms); progress lines count from here. */
  started?: number;
}

/** How often a build that says nothing says that it is still running. */
const HEARTBEAT_MS = 60_000;
/** How many of the last output lines a failure shows. */
const TAIL_LINES = 30;

/** A progress line of a build that started at `started` (ms): indented, the seconds since then first. */
export function progressLine(started: number, line: string): string {
  return `    [${Math.round((Date.now() - started) / 1000)} s] ${line}`;
}

/** Runs the build; resolves when it exits 0, else rejects with a FailureError holding its last lines. */
export async function runLongBuild(b: LongBuild): Promise<void> {
  const started = b.started ?? Date.now();
  const progress = (line: string) => b.log(progressLine(started, line));
  const tail: string[] = [];
  const chunks: Buffer[] = [];
  let lastSaid = Date.now();
  const onData = (chunk: Buffer) => {
    chunks.push(chunk);
    for (const line of chunk.toString().split('\n')) {
      if (!line.trim()) continue;
      tail.push(line);
      if (tail.length > TAIL_LINES) tail.shift();
      const said = b.progressOf(line);
      if (said === undefined) continue;
      lastSaid = Date.now();
      progress(said);
    }
  };
  const heartbeat = setInterval(() => {
    if (Date.now() - lastSaid >= HEARTBEAT_MS) progress(b.quiet);
  }, HEARTBEAT_MS);
  // No time limit: the build stays in this process group, so Ctrl-C reaches it.
  const r = await runCommand(sh`${b.command} ${b.args}`, { cwd: b.cwd, env: b.env, onStdout: onData, onStderr: onData }).finally(() => clearInterval(heartbeat));
  await writeFile(b.logFile, Buffer.concat(chunks)).catch(() => undefined);
  if (r.code !== 0) throw new FailureError(`${b.what} failed (${b.command} exit ${r.code}) in ${b.cwd}:\n${tail.map((l) => `  ${l}`).join('\n')}`, b.hint);
}
