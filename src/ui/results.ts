// What a run returns: a row per step and machine, and the outcome of the whole run. The engine
// makes them, the reporters and the summary show them (defined here, below both, so ui/ needs
// nothing of the engine).

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
  /** Failed because the machine could not be reached (no SSH connection), as opposed to failing there. */
  unreachable?: true;
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
