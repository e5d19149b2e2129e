// What hardway does when it is interrupted (Ctrl-C, the terminal hung up, a kill): every local
// command still running is killed with what it started (the transport's runner), then hardway
// exits with the shell's code for that signal, 128 + its number. Remote commands end with their
// SSH channels when the process goes, as they did before.
import { inFlightLines } from '../engine/in-flight.ts';
import { abortLocalCommands } from '../transport/local.ts';
import { terminalLines } from '../ui/wrap.ts';

/** The exit code for each signal hardway handles: 128 + the signal's number, as a shell reports it. */
export const INTERRUPT_EXIT_CODES = { SIGINT: 130, SIGTERM: 143, SIGHUP: 129 } as const;

/** A signal hardway handles. */
export type InterruptSignal = keyof typeof INTERRUPT_EXIT_CODES;

/** What handling a signal needs: where signals come from and how the process exits (a test passes its own). */
export interface InterruptDeps {
  on(signal: InterruptSignal, listener: () => void): unknown;
  off(signal: InterruptSignal, listener: () => void): unknown;
  exit(code: number): void;
  abort(reason: string): void;
  /** What was running (each step on its machines, the run's log), said before exiting. */
  running?: () => string[];
  /** Where the interrupt is said (stderr). */
  say?: (line: string) => void;
}

const PROCESS_DEPS: InterruptDeps = {
  on: (s, l) => process.on(s, l),
  off: (s, l) => process.off(s, l),
  exit: (c) => process.exit(c),
  abort: abortLocalCommands,
  running: inFlightLines,
  // Synchronous on a terminal, a file and (on Linux) a pipe: written before the process exits.
  say: (line) => terminalLines(line, process.stderr, '    ').forEach((l) => process.stderr.write(`${l}\n`)),
};

/** Handles SIGINT, SIGTERM and SIGHUP for the rest of the run: aborts running commands and exits 130, 143 or 129. Returns what removes the handlers. */
export function handleInterrupts(deps: InterruptDeps = PROCESS_DEPS): () => void {
  const listeners = (Object.keys(INTERRUPT_EXIT_CODES) as InterruptSignal[]).map((signal) => {
    const listener = () => {
      // Said first, so a rerun knows where it stopped: what was running where, and the run's log.
      const running = deps.running?.() ?? [];
      if (deps.say) for (const line of [`interrupted (${signal})${running.length ? ':' : ''}`, ...running.map((l) => `  ${l}`)]) deps.say(line);
      deps.abort(`hardway was interrupted (${signal})`);
      deps.exit(INTERRUPT_EXIT_CODES[signal]);
    };
    deps.on(signal, listener);
    return [signal, listener] as const;
  });
  return () => listeners.forEach(([signal, listener]) => deps.off(signal, listener));
}
