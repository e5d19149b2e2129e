// What kind of output a stream gets: an interactive terminal (listr2 progress), colors or not.
import type { Writable } from 'node:stream';

/** How to render on a stream: progress UI only on a TTY outside CI; color unless NO_COLOR. */
export interface OutputStyle {
  interactive: boolean;
  color: boolean;
}

/** The narrowest terminal the progress UI is drawn on: it wraps its lines to the width (0 columns: one character per line). */
export const MIN_COLUMNS = 40;

/**
 * Decides the style for a stream from its TTY-ness, its width and the environment (CI, NO_COLOR,
 * TERM=dumb). A terminal that reports fewer than MIN_COLUMNS (a serial console says 0) gets plain lines.
 */
export function outputStyle(stream: Writable, env: NodeJS.ProcessEnv): OutputStyle {
  const tty = (stream as { isTTY?: boolean }).isTTY === true;
  const columns = (stream as { columns?: number }).columns;
  const wide = columns === undefined || columns >= MIN_COLUMNS;
  const ci = env.CI !== undefined && env.CI !== '' && env.CI !== 'false' && env.CI !== '0';
  const noColor = env.NO_COLOR !== undefined && env.NO_COLOR !== '';
  return { interactive: tty && wide && !ci && env.TERM !== 'dumb', color: tty && !noColor && env.TERM !== 'dumb' };
}

/** ANSI color helpers that are the identity when color is off. */
export function palette(color: boolean) {
  const wrap = (open: number, close: number) => (s: string) => (color ? `\x1b[${open}m${s}\x1b[${close}m` : s);
  return { red: wrap(31, 39), green: wrap(32, 39), yellow: wrap(33, 39), dim: wrap(2, 22), bold: wrap(1, 22) };
}

/** The palette type. */
export type Palette = ReturnType<typeof palette>;
