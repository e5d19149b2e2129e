// Text that fits the terminal: help and other long lines are wrapped at word boundaries to the
// width of the terminal they are printed on (80 columns when it is not a terminal).
import type { Writable } from 'node:stream';

/** The width text is wrapped to when the output is not a terminal (a pipe, a file). */
export const DEFAULT_WIDTH = 80;

/** Narrower terminals than this still get this width: one word per line helps nobody. */
const MIN_WIDTH = 40;

/** The width to wrap output to: the terminal's columns, else DEFAULT_WIDTH. */
export function widthOf(stream: Writable): number {
  const s = stream as { isTTY?: boolean; columns?: number };
  if (s.isTTY !== true || !s.columns) return DEFAULT_WIDTH;
  return Math.max(MIN_WIDTH, s.columns);
}

/**
 * One paragraph wrapped to `width`: the first line starts with `first`, every later one with
 * `rest` (a hanging indent). A word longer than a line stays whole on a line of its own.
 */
export function wrap(text: string, width: number, first = '', rest = first): string[] {
  const words = text.split(/\s+/).filter((w) => w !== '');
  const lines: string[] = [];
  let line = first;
  let empty = true;
  for (const word of words) {
    if (!empty && line.length + 1 + word.length > width) {
      lines.push(line);
      line = rest + word;
    } else {
      line += (empty ? '' : ' ') + word;
    }
    empty = false;
  }
  lines.push(line);
  return lines.map((l) => l.trimEnd());
}

/**
 * A block of text wrapped to `width` with `indent`: paragraphs are separated by blank lines; a
 * line that starts with "- " or with spaces keeps its own line (a list item, an example) and its
 * continuation lines are indented under its text.
 */
export function wrapBlock(text: string, width: number, indent = ''): string[] {
  const out: string[] = [];
  for (const [i, paragraph] of text.split(/\n\s*\n/).entries()) {
    if (i > 0) out.push('');
    let pending: string[] = [];
    const flush = () => {
      if (pending.length) out.push(...wrap(pending.join(' '), width, indent));
      pending = [];
    };
    for (const line of paragraph.split('\n')) {
      const item = /^(\s*(?:- )?)(\S.*)$/.exec(line);
      if (item && item[1] !== '') {
        flush();
        out.push(...wrap(item[2]!, width, indent + item[1], indent + ' '.repeat(item[1]!.length)));
      } else {
        pending.push(line.trim());
      }
    }
    flush();
  }
  return out;
}

/**
 * Rows of two columns: the first padded to the widest (at most `maxFirst`; exactly `maxFirst` when
 * `fixed`, so several tables line up), the second wrapped beside it.
 */
export function twoColumns(rows: ReadonlyArray<readonly [string, string]>, width: number, indent = '  ', maxFirst = 28, fixed = false): string[] {
  const first = fixed ? maxFirst : Math.min(maxFirst, Math.max(0, ...rows.map(([a]) => a.length)));
  const out: string[] = [];
  for (const [a, b] of rows) {
    const hang = indent + ' '.repeat(first + 2);
    if (a.length > first) {
      // A label wider than the column gets its own line; its text starts below, in the column.
      out.push(indent + a);
      out.push(...wrap(b, width, hang));
    } else {
      out.push(...wrap(b, width, indent + a.padEnd(first) + '  ', hang));
    }
  }
  return out;
}

/** A command line at the end of a hint line (after "...: "), kept whole when wrapped so it can be copied. */
const TRAILING_COMMAND = /^(.*?: )((?:sudo )?hardway \S.*)$/;

/**
 * An error as formatError prints it, wrapped to `width`: the `error: ` line and each `hint: ` line
 * (and its continuation lines) with a hanging indent under their text; a command line that ends a
 * line stays whole on a line of its own; other lines (a remote command's stderr) are left as they are.
 */
export function wrapMessage(text: string, width: number): string {
  return text.split('\n').flatMap((line) => {
    const head = /^(error: |  hint: | {8})(.*)$/.exec(line);
    if (!head || line.length <= width) return [line];
    const [, lead, body] = head as unknown as [string, string, string];
    const hang = lead === 'error: ' ? '  ' : ' '.repeat(8);
    const cmd = TRAILING_COMMAND.exec(body);
    if (!cmd) return wrap(body, width, lead, hang);
    const before = wrap(cmd[1]!, width, lead, hang);
    const last = before.at(-1)!;
    // The command on the same line when it fits there, else on its own line.
    if (last.length + 1 + cmd[2]!.length <= width) return [...before.slice(0, -1), `${last} ${cmd[2]}`];
    return [...before, hang + cmd[2]];
  }).join('\n');
}

/**
 * A line of a report (`pki: reissued ...`) as a terminal shows it: wrapped to its width, later
 * lines indented by `hang`; to a pipe or a file, exactly as it is (a script reads one line per item).
 */
export function terminalLines(text: string, stream: Writable, hang = '  '): string[] {
  const s = stream as { isTTY?: boolean };
  return s.isTTY === true ? wrap(text, widthOf(stream), '', hang) : [text];
}
