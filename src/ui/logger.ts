// The one logger: every human-readable line goes through it, is redacted, lands in the run log,
// and, when it concerns one machine, starts with that machine's name.
import type { Writable } from 'node:stream';
import type { Redactor } from './redact.ts';
import type { RunLog } from './run-log.ts';
import type { Palette } from './terminal.ts';

/** Lines a step writes about one host; each is logged with the host's name. */
export interface HostLog {
  info(msg: string): void;
  debug(msg: string): void;
}

/** Lines for the user; `debug` only shows with -v (it always reaches the run log). */
export interface Logger {
  info(msg: string): void;
  warn(msg: string): void;
  error(msg: string): void;
  debug(msg: string): void;
  /** A logger whose every line starts with `name: `. */
  host(name: string): HostLog & { error(msg: string): void };
  readonly colors: Palette;
}

/** Where the logger writes and what it hides. */
export interface LoggerOptions {
  stream: Writable;
  verbose: boolean;
  colors: Palette;
  redactor: Redactor;
  runLog?: RunLog;
}

/** Creates the logger for a run. */
export function createLogger(o: LoggerOptions): Logger {
  const emit = (text: string, show: boolean, host?: string, paint: (s: string) => string = (s) => s) => {
    const clean = o.redactor.redact(text);
    o.runLog?.write(clean, host);
    if (!show) return;
    const lines = clean.split('\n').map((l) => (host ? `${o.colors.bold(host)}: ${paint(l)}` : paint(l)));
    o.stream.write(lines.join('\n') + '\n');
  };
  return {
    colors: o.colors,
    info: (m) => emit(m, true),
    warn: (m) => emit(`warning: ${m}`, true, undefined, o.colors.yellow),
    error: (m) => emit(m, true, undefined, o.colors.red),
    debug: (m) => emit(m, o.verbose, undefined, o.colors.dim),
    host: (name) => ({
      info: (m) => emit(m, true, name),
      debug: (m) => emit(m, o.verbose, name, o.colors.dim),
      error: (m) => emit(m, true, name, o.colors.red),
    }),
  };
}
