// The few error types hardway raises on purpose. Each carries the facts a user needs to act,
// and the CLI prints them without a stack trace.
import { maskCredentials } from './url.ts';

/** Where in an input file a problem was found. */
export interface Location {
  file: string;
  line?: number;
}

/** Bad input or usage: exit code 2, nothing was changed. */
export class InputError extends Error {
  readonly exitCode = 2;
  constructor(
    message: string,
    readonly hint?: string,
    readonly where?: Location,
  ) {
    super(message);
    this.name = 'InputError';
  }
}

/** An expected failure of the work itself (a check failed, a step failed): exit code 1. */
export class FailureError extends Error {
  readonly exitCode = 1;
  constructor(
    message: string,
    readonly hint?: string,
  ) {
    super(message);
    this.name = 'FailureError';
  }
}

/**
 * A step could not start on a machine because something it needs is not there yet (binaries in
 * downloads/, an API that answers). The machine was not changed, so with --keep-going the later
 * steps still run on it.
 */
export class PreconditionError extends FailureError {
  constructor(message: string, hint?: string) {
    super(message, hint);
    this.name = 'PreconditionError';
  }
}

/** A command that failed on a machine (or locally, machine = 'local'): names machine, command and stderr. */
export class CommandError extends Error {
  readonly exitCode = 1;
  constructor(
    readonly machine: string,
    readonly command: string,
    readonly code: number | null,
    readonly stderr: string,
    readonly stdout = '',
  ) {
    super(
      `${machine}: command failed (exit ${code ?? 'signal'}): ${command}` +
        (stderr.trim() ? `\n${indent(stderr.trim())}` : ''),
    );
    this.name = 'CommandError';
  }
}

/** True for errors raised on purpose, which the CLI prints without a stack trace. */
export function isExpectedError(e: unknown): e is InputError | FailureError | CommandError {
  return e instanceof InputError || e instanceof FailureError || e instanceof CommandError;
}

/** Formats an expected error as the user sees it: `file:line: message` then a hint. */
export function formatError(e: InputError | FailureError | CommandError): string {
  let where = '';
  if (e instanceof InputError && e.where) {
    where = e.where.line ? `${e.where.file}:${e.where.line}: ` : `${e.where.file}: `;
  }
  const hint = 'hint' in e && e.hint ? `\n  hint: ${clip(e.hint, MAX_MESSAGE)}` : '';
  // A remote command's stderr is shown whole; our own messages never echo a huge input whole.
  const message = e instanceof CommandError ? e.message : clip(e.message, MAX_MESSAGE);
  return `error: ${where}${message}${hint}`;
}

/** An error as a --json object prints it: exit code, message, file and line (input errors), hint; null where there is none. */
export function errorJson(e: unknown): { code: number; message: string; file: string | null; line: number | null; hint: string | null } {
  if (!isExpectedError(e)) return { code: 1, message: `internal error (a bug in hardway): ${(e as Error)?.message ?? String(e)}`, file: null, line: null, hint: null };
  const where = e instanceof InputError ? e.where : undefined;
  const hint = 'hint' in e && e.hint ? clip(e.hint, MAX_MESSAGE) : null;
  return { code: e.exitCode, message: e instanceof CommandError ? e.message : clip(e.message, MAX_MESSAGE), file: where?.file ?? null, line: where?.line ?? null, hint };
}

/** The longest message or hint printed whole; input quoted in them is cut much shorter (see quote). */
const MAX_MESSAGE = 2000;

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}... (cut: ${text.length} characters in all)`;
}

/**
 * A value from the user's input as an error message quotes it: in double quotes (JSON), and if
 * long, cut after `max` characters with its length, so a 100 kB field is never echoed whole.
 */
export function quote(value: unknown, max = 60): string {
  // A URL's password never reaches a message, whatever value it came in.
  if (typeof value === 'string') value = maskCredentials(value);
  if (typeof value !== 'string') {
    // Numbers as written (1e400 is Infinity, which JSON would print as null).
    const text = typeof value === 'number' ? String(value) : (JSON.stringify(value) ?? String(value));
    return text.length <= max ? text : `${text.slice(0, max)}... (${text.length} characters)`;
  }
  if (value.length <= max) return JSON.stringify(value);
  return `${JSON.stringify(value.slice(0, max)).slice(0, -1)}..." (${value.length} characters)`;
}

function indent(text: string): string {
  return text
    .split('\n')
    .map((l) => `  ${l}`)
    .join('\n');
}
