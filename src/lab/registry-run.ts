// Running the lab-registry step (registry-step.ts) on the lab's registry machine through the engine:
// under the lab directory's lock, with a run log in its logs/ like every run of a step, reaching
// the machine through the lab's connector. The engine's lines (the machine's result and, with
// --dry-run, the plan with its diffs) go to the lab's progress, or back to the caller to print.
import { Writable } from 'node:stream';
import { join } from 'node:path';
import { displayPath } from '../input-file.ts';
import { FailureError } from '../errors.ts';
import { connectionPool } from '../engine/connections.ts';
import { acquireRunLock } from '../lock.ts';
import { openRunLog } from '../ui/run-log.ts';
import { runSteps } from '../engine/run.ts';
import type { StepOptions } from '../engine/types.ts';
import { loadInventory, type Inventory } from '../inventory.ts';
import { createLogger } from '../ui/logger.ts';
import { Redactor } from '../ui/redact.ts';
import { plainReporter } from '../ui/reporter.ts';
import { palette } from '../ui/terminal.ts';
import { labConnector, labHost } from './connect.ts';
import { LAB_FILES } from './outputs.ts';
import { labRegistryStep } from './registry-step.ts';
import type { LabMachine } from './types.ts';

/** What the step did (or, with --dry-run, would do) on the registry machine. */
export interface RegistryRun {
  /** Changes applied (planned with --dry-run). */
  changes: number;
  /** The engine's lines: the machine's result and its changes (the plan with diffs under --dry-run). */
  lines: string[];
  logFile: string;
}

/** The lab's inventory with the registry machine as its one machine: the step's only target. */
export function registryInventory(dir: string, registry: LabMachine): Inventory {
  const inv = loadInventory(join(dir, LAB_FILES.machines));
  const m = labHost(registry);
  return { ...inv, machines: [m], controlPlanes: [], workers: [m] };
}

/** Runs (or with dryRun plans) the lab-registry step on the registry machine; fails with the step's error. */
export async function runRegistryStep(dir: string, registry: LabMachine, opts: { dryRun: boolean; update?: (line: string) => void }): Promise<RegistryRun> {
  const inventory = registryInventory(dir, registry);
  const lock = acquireRunLock(dir, 'lab up');
  const redactor = new Redactor();
  const lines: string[] = [];
  try {
    const runLog = openRunLog(dir, 'lab-up', redactor);
    try {
      const stream = new Writable({
        write(chunk: Buffer, _enc, done) {
          for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) {
            lines.push(line);
            opts.update?.(line);
          }
          done();
        },
      });
      const logger = createLogger({ stream, verbose: false, colors: palette(false), redactor, runLog });
      const options: StepOptions = { dryRun: opts.dryRun, verbose: false, keepGoing: false, concurrency: 1, values: {} };
      runLog.write(`hardway lab up: step ${labRegistryStep.name} on ${registry.hostname} (${registry.ip}); options ${JSON.stringify({ ...options, values: undefined })}`);
      const connect = labConnector(dir, { log: (line) => runLog.write(line, registry.hostname) });
      const pool = connectionPool(async () => connect(registry));
      try {
        const result = await runSteps({ steps: [labRegistryStep], inventory, selected: inventory.machines, options },
          { pool, logger, runLog, redactor, reporter: plainReporter(logger, opts.dryRun) });
        const failed = result.results.find((r) => r.status === 'failed');
        if (failed) throw new FailureError(`${registry.hostname}: ${labRegistryStep.name} failed: ${failed.error ?? 'see the log'}`, `log of this run: ${displayPath(runLog.path)}`);
        return { changes: result.changed, lines, logFile: runLog.path };
      } finally {
        await pool.closeAll();
      }
    } finally {
      runLog.close();
    }
  } finally {
    lock.release();
  }
}
