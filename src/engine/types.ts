// The Step API: what a step is, what it may plan, and what it sees. Steps only read (plan);
// the engine applies their changes, plans again to prove convergence, then lets them verify.
import type { Command } from '../shell.ts';
import type { Inventory, Machine } from '../inventory.ts';
import type { Transport } from '../transport/types.ts';
import type { Facts } from './facts.ts';

/** A local file streamed to the machine (large binaries): its checksum and size are known up front. */
export interface LocalFileContent {
  file: string;
  sha256: string;
  size: number;
}

/** Bytes a `put` installs: in memory, or a local file. */
export type PutContent = Buffer | LocalFileContent;

/** Install a file atomically (temp file beside it, then rename), with mode and owner. */
export interface PutChange {
  kind: 'put';
  path: string;
  content: PutContent;
  mode: number;
  /** `user:group`; default root:root. */
  owner?: string;
  /** Secret contents never appear in output, plans, diffs or logs. */
  secret?: boolean;
  /** Why the change is needed, shown in plans: e.g. "content differs", "missing". */
  reason: string;
}

/** Run a command; a non-zero exit fails the machine with command, exit code and stderr. */
export interface ExecChange {
  kind: 'exec';
  cmd: Command;
  /** Data for the command's stdin; never logged when `secret`. */
  stdin?: string | Buffer;
  secret?: boolean;
  /** Milliseconds before the command is abandoned (default: the transport's, 10 min). */
  timeoutMs?: number;
  reason: string;
}

/** One thing a step wants done on a machine. */
export type Change = PutChange | ExecChange;

/** Run-wide options a step may read; `values` holds every parsed CLI option (e.g. pin-hosts' `local`). */
export interface StepOptions {
  dryRun: boolean;
  verbose: boolean;
  keepGoing: boolean;
  concurrency: number;
  values: Record<string, string | boolean | string[] | undefined>;
}

/** Lines a step writes about one host; each is logged with the host's name. */
export interface HostLog {
  info(msg: string): void;
  debug(msg: string): void;
}

/** What a step sees on any host: the inventory, a transport (read-only use in plan), facts, options. */
export interface HostContext {
  /** The host's name in output: a machine's hostname, or `jumpbox`. */
  host: string;
  inventory: Inventory;
  transport: Transport;
  facts: Facts;
  options: StepOptions;
  log: HostLog;
}

/** What a step sees on a machine of the inventory. */
export interface StepContext extends HostContext {
  machine: Machine;
}

/** What verify() sees: the context plus the changes applied on this host in this run. */
export type VerifyContext<C extends HostContext = StepContext> = C & { applied: Change[] };

/** The optional part of a step that runs on the jumpbox itself (local transport). */
export interface JumpboxPart {
  /** Whether the jumpbox takes part in this run (e.g. pin-hosts --local). */
  when(options: StepOptions): boolean;
  plan(ctx: HostContext): Promise<Change[]>;
  verify?(ctx: VerifyContext<HostContext>): Promise<void>;
}

/** One idempotent unit of work: plan reads and returns changes; the engine applies them. */
export interface Step {
  /** What the user types with --only, e.g. 'pin-hosts'. */
  name: string;
  /** One line shown while the step runs. */
  title: string;
  /** The machines this step applies to (before --node filtering). */
  targets(inv: Inventory, options: StepOptions): Machine[];
  /**
   * Why the step has nothing to do anywhere in this run (e.g. no image archives), if so: the engine
   * says it once, in the step's heading, instead of every machine saying it. Plans still run.
   */
  idle?(inv: Inventory): string | undefined;
  /** Reads the machine and returns what differs from the desired state; must not change anything. */
  plan(ctx: StepContext): Promise<Change[]>;
  /** Read-only checks after apply and re-plan; throw FailureError/CommandError to fail the machine. */
  verify?(ctx: VerifyContext): Promise<void>;
  jumpbox?: JumpboxPart;
}

/** How a step ended on one host. */
export type HostStatus = 'changed' | 'unchanged' | 'failed' | 'skipped';

/** One row of the summary and of the JSON results. */
export interface HostResult {
  step: string;
  machine: string;
  status: HostStatus;
  /** Changes applied (or, with --dry-run, planned). */
  changes: number;
  error?: string;
}

/** The outcome of a whole run. */
export interface RunResult {
  ok: boolean;
  /** Total changes applied (planned with --dry-run) over every step and machine. */
  changed: number;
  /** Number of step/machine results that failed. */
  failed: number;
  results: HostResult[];
}
