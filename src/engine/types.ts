// The Step API: what a step is, what it may plan, and what it sees. A plan gets facts, never a
// transport: the engine applies the changes, plans again to prove convergence, then lets the step
// verify. Checks only read; actions (which write) are their own kind, never run under --dry-run.
import type { Command } from '../shell.ts';
import type { ApiWrite } from '../cluster-api/writes.ts';
import type { Inventory, Machine } from '../inventory.ts';
import type { Transport } from '../transport/types.ts';
import type { Facts } from './facts.ts';
import type { HostLog } from '../ui/logger.ts';

// What a step logs and what a run returns are shown by ui/, which sits below the engine: defined
// there, named here too so a step needs this one module.
export type { HostLog } from '../ui/logger.ts';
export type { HostResult, HostStatus, RunResult } from '../ui/results.ts';

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
  /**
   * The same change as a write to the API server (a kubectl apply or delete of the first control
   * plane): made from the jumpbox when the API answers it, else `cmd` runs (src/cluster-api/).
   */
  api?: ApiWrite;
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

/**
 * Where a step runs: a machine of the inventory, or the jumpbox itself (this machine). The engine
 * treats both alike; only the transport factory tells them apart (SSH or local).
 */
export type Host = { name: string; machine: Machine } | { name: 'jumpbox'; machine?: undefined };

/**
 * What a step sees on any host: the inventory, facts (reads, probes and waits: never a transport,
 * so nothing a plan or a check does can write), the run's options and a log.
 */
export interface HostContext {
  /** The host's name in output: a machine's hostname, or `jumpbox`. */
  host: string;
  inventory: Inventory;
  facts: Facts;
  options: Readonly<StepOptions>;
  log: HostLog;
}

/** What a step sees on a machine of the inventory. */
export interface StepContext extends HostContext {
  machine: Machine;
}

/** What verify() sees: the context plus the changes applied on this host in this run. */
export type VerifyContext<C extends HostContext = StepContext> = C & { applied: Change[] };

/** What an action sees: a machine's context and the one thing plans and checks never get, its transport. */
export interface ActionContext extends StepContext {
  transport: Transport;
}

/** The optional part of a step that runs on the jumpbox itself (local transport). */
export interface JumpboxPart {
  /** Whether the jumpbox takes part in this run (e.g. pin-hosts --local). */
  when(options: StepOptions, inv: Inventory): boolean;
  plan(ctx: HostContext): Promise<Change[]>;
  verify?(ctx: VerifyContext<HostContext>): Promise<void>;
}

/** What every kind of step has: its name, its title, and the machines it runs on. */
interface StepBase {
  /** What the user types with --only, e.g. 'pin-hosts'. */
  name: string;
  /** One line shown while the step runs. */
  title: string;
  /** The machines this step applies to (before --node filtering). */
  targets(inv: Inventory, options: StepOptions): Machine[];
  /**
   * Machines that take turns within this step (a rolling restart): one at a time, in inventory
   * order, each once the one before it has finished; after one fails the rest are not run. The
   * others run side by side as usual.
   */
  inTurns?(machine: Machine): boolean;
}

/**
 * One idempotent unit of work: plan reads (facts only) and returns changes; the engine applies them,
 * plans again to prove convergence, then lets the step verify (facts only). --dry-run shows the plan.
 */
export interface ChangeStep extends StepBase {
  kind?: 'change';
  /**
   * Why the step has nothing to do anywhere in this run (e.g. no image archives), if so: the engine
   * says it once, in the step's heading, instead of every machine saying it. Plans still run.
   */
  idle?(inv: Inventory): string | undefined;
  /** Reads the machine and returns what differs from the desired state. */
  plan(ctx: StepContext): Promise<Change[]>;
  /** Read-only checks and waits after apply and re-plan; throw FailureError/CommandError to fail the machine. */
  verify?(ctx: VerifyContext): Promise<void>;
  /** The step's own words for a re-plan that is not empty (when it knows a cause other than a bug). */
  unconverged?(applied: Change[], again: Change[], host: string): Error | undefined;
  jumpbox?: JumpboxPart;
}

/**
 * Read-only checks (verify, doctor): facts only, so they cannot change anything. Not run under
 * --dry-run: they would read machines as they are, not as the planned changes before them leave them.
 */
export interface CheckStep extends StepBase {
  kind: 'check';
  /** Throws FailureError naming every problem found on the machine. */
  check(ctx: StepContext): Promise<void>;
}

/**
 * An action that writes outside any plan (smoke creates objects in the cluster): it gets the
 * machine's transport, and --dry-run never runs it.
 */
export interface ActionStep extends StepBase {
  kind: 'action';
  run(ctx: ActionContext): Promise<void>;
}

/** Anything a command runs, in its place in the command's order. */
export type Step = ChangeStep | CheckStep | ActionStep;
