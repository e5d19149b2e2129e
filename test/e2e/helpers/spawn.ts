/**
 * A child process whose output is collected and whose end (exit code or signal, output, duration)
 * is a promise: for tests that kill what they start (engine faults, the kill test).
 */
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';

/** How a started process ended. */
export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/** A started process and its end. */
export interface Started {
  child: ChildProcess;
  done: Promise<Exit>;
}

/** Starts `cmd args` with CI=true (no terminal UI) and collects stdout and stderr until it closes. */
export function startCollected(cmd: string, args: string[], opts: Pick<SpawnOptions, 'cwd' | 'detached'>): Started {
  const started = Date.now();
  const child = spawn(cmd, args, { ...opts, env: { ...process.env, CI: 'true' }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d) => (stdout += d));
  child.stderr!.on('data', (d) => (stderr += d));
  const done = new Promise<Exit>((resolve) => child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr, ms: Date.now() - started })));
  return { child, done };
}
