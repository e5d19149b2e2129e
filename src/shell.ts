// POSIX shell quoting. Every command that reaches a shell (remote or local) is built with `sh`,
// so a name or a path is never interpreted by the shell.

const COMMAND = Symbol('hardway.command');

/** A shell command line whose interpolated values are already quoted. Build it only with `sh`. */
export interface Command {
  readonly [COMMAND]: true;
  readonly text: string;
}

/** Quotes one value for a POSIX shell: safe words stay readable, anything else is single-quoted. */
export function quote(value: string | number): string {
  const s = String(value);
  if (s !== '' && /^[A-Za-z0-9_@%+=:,./-]+$/.test(s)) return s;
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

type Interpolated = string | number | Command | ReadonlyArray<string | number | Command>;

function render(value: Interpolated): string {
  if (Array.isArray(value)) return value.map((v) => render(v)).join(' ');
  if (typeof value === 'object' && value !== null && COMMAND in (value as object)) return (value as Command).text;
  return quote(value as string | number);
}

/** Tagged template that builds a Command: each interpolated value is quoted; arrays become quoted words; Commands nest unquoted. */
export function sh(strings: TemplateStringsArray, ...values: Interpolated[]): Command {
  let text = strings[0]!;
  values.forEach((v, i) => {
    text += render(v) + strings[i + 1];
  });
  return { [COMMAND]: true, text };
}

/** Joins commands with a separator (`&&`, `;`, newline) into one Command. */
export function joinCommands(cmds: Command[], sep = ' && '): Command {
  return { [COMMAND]: true, text: cmds.map((c) => c.text).join(sep) };
}

/** A whole shell program shipped with hardway (a file under src/, never input) as a Command. */
export function shellProgram(text: string): Command {
  return { [COMMAND]: true, text };
}

/** True if the value is a Command built by `sh`. */
export function isCommand(v: unknown): v is Command {
  return typeof v === 'object' && v !== null && COMMAND in v;
}
