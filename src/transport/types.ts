// The contract between the engine and a machine: the only way any step touches a machine.
import type { Command } from '../shell.ts';

/** What a finished remote command returned. A non-zero code is data here, not an exception. */
export interface ExecResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** One probe of a facts batch, by its registry name and the arguments it was asked with. */
export interface ProbeAsked {
  readonly probe: string;
  readonly args: readonly unknown[];
}

/** Options for one exec. */
export interface ExecOptions {
  /** Data written to the command's stdin, then closed. */
  stdin?: string | Buffer;
  /** Milliseconds before the command is abandoned with a timeout error (default: transport's). */
  timeoutMs?: number;
  /**
   * One line the run log shows instead of the command, its stdin and its output: for the facts
   * script, whose every answer is logged on its own line already.
   */
  logAs?: string;
  /**
   * The probes the facts script's stdin asks, in the order of their lines: for a transport that
   * answers a probe by its name and arguments instead of running its command (the test machines).
   * A transport that runs commands ignores it: what is sent and what runs are the same either way.
   */
  probes?: readonly ProbeAsked[];
}

/** Where an upload's bytes come from: memory, or a local file streamed from disk (large binaries). */
export type UploadSource = { data: Buffer } | { file: string };

/** The owner of an upload (and of a desired file) that names none. */
export const DEFAULT_OWNER = 'root:root';

/** Options for one upload. */
export interface UploadOptions {
  mode: number;
  /** `user:group` for chown after writing; default root:root. */
  owner?: string;
}

/** One connection to one machine, reused by every step of a run. */
export interface Transport {
  /** The machine's hostname as in machines.txt; every error names it. */
  readonly machine: string;
  /** Runs a command built with `sh`; resolves with the exit code, rejects only on transport failure or timeout. */
  exec(cmd: Command, opts?: ExecOptions): Promise<ExecResult>;
  /** Writes a file atomically: temp file beside the target, mode/owner set, renamed over it; parent dirs created. */
  upload(path: string, source: UploadSource, opts: UploadOptions): Promise<void>;
  /** Closes the connection. */
  close(): Promise<void>;
  /** The command as it runs on the machine, raised (`sudo -n sh -c '...'`) where the login is raised; unset: its text. */
  describe?(cmd: Command): string;
}

/** The command as a transport runs it: what the run log and --dry-run show. */
export function runsAs(t: Pick<Transport, 'describe'>, cmd: Command): string {
  return t.describe ? t.describe(cmd) : cmd.text;
}
