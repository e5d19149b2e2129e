// One run of a remote command around the engine: take the project's lock, open the run log,
// choose the renderer, connect lazily, run the steps, close everything, print the summary or JSON.
import type { Writable } from 'node:stream';
import { displayPath } from '../input-file.ts';
import type { Inventory, Machine } from '../inventory.ts';
import { createLogger, type Logger } from '../ui/logger.ts';
import { Redactor } from '../ui/redact.ts';
import { plainReporter } from '../ui/reporter.ts';
import { summaryJson, summaryLines } from '../ui/summary.ts';
import { outputStyle, palette } from '../ui/terminal.ts';
import { widthOf } from '../ui/wrap.ts';
import type { ClusterApi, ClusterApiOptions } from '../cluster-api/cluster-api.ts';
import { connectionPool, type TransportFactory } from './connections.ts';
import { acquireRunLock } from '../lock.ts';
import { openRunLog } from '../ui/run-log.ts';
import { InFlight, trackRun } from './in-flight.ts';
import { runSteps } from './run.ts';
import type { RunResult, Step, StepOptions } from './types.ts';

/**
 * How a session reaches hosts; built once the logger exists so connection events are logged.
 * `note` shows at once what happens to a host (connecting, each retry) and logs it.
 */
export type Connectors = (logger: Logger, note: (host: string, line: string) => void) => Promise<TransportFactory>;

/** Everything one run needs. */
export interface SessionRequest {
  command: string;
  steps: Step[];
  /** Segments run in order, lanes of a segment side by side (indexes into steps); default one step at a time. */
  lanes?: number[][][];
  inventory: Inventory;
  selected: Machine[];
  options: StepOptions;
  json: boolean;
  stdout: Writable;
  stderr: Writable;
  env: NodeJS.ProcessEnv;
  connectors: Connectors;
  /** Makes the run's direct route to the API server and etcd (none: every cluster read goes over SSH). */
  clusterApi?: (opts: ClusterApiOptions) => ClusterApi | undefined;
  /** True when the caller already holds the project's lock (a command that first writes pki/ under it). */
  lockHeld?: boolean;
}

/** Runs the steps under the project's lock and returns the exit code (0 all good, 1 a step failed). */
export async function runSession(req: SessionRequest): Promise<{ code: number; result: RunResult; logFile: string }> {
  const lock = req.lockHeld ? undefined : acquireRunLock(req.inventory.dir, req.command);
  const redactor = new Redactor();
  let runLog: ReturnType<typeof openRunLog>;
  try {
    runLog = openRunLog(req.inventory.dir, req.command, redactor);
  } catch (e) {
    lock?.release(); // logs/ could not be opened (a link there, no space): nothing ran
    throw e;
  }
  // With --json, stdout carries only the JSON object; progress goes to stderr.
  const stream = req.json ? req.stderr : req.stdout;
  const style = outputStyle(stream, req.env);
  const logger = createLogger({ stream, verbose: req.options.verbose, colors: palette(style.color), redactor, runLog });
  // listr2 takes a tenth of a second to load: only a terminal gets it.
  const reporter = style.interactive
    ? (await import('../ui/listr-reporter.ts')).listrReporter(logger, stream, req.options.dryRun)
    : plainReporter(logger, req.options.dryRun);
  runLog.write(`hardway ${req.command}: steps ${req.steps.map((s) => s.name).join(', ')}; machines ${req.selected.map((m) => m.hostname).join(', ')}; options ${JSON.stringify({ ...req.options, values: undefined })}`);
  // What a Ctrl-C says was going on (src/cli/interrupt.ts), until the run ends.
  const inFlight = new InFlight(req.command, runLog.path);
  const untrack = trackRun(inFlight);
  let pool: ReturnType<typeof connectionPool> | undefined;
  // One direct route to the cluster per run; -v says when it is given up for the old one, a
  // warning when a certificate failed verification there.
  const clusterApi = req.clusterApi?.({ say: (line) => logger.debug(line), warn: (line) => logger.warn(line) });
  try {
    const note = (host: string, line: string) => {
      const clean = redactor.redact(line);
      runLog.write(clean, host);
      reporter.hostNote(host, clean);
    };
    pool = connectionPool(await req.connectors(logger, note));
    const result = await runSteps(
      { steps: req.steps, lanes: req.lanes, inventory: req.inventory, selected: req.selected, options: req.options },
      { pool, logger, runLog, redactor, reporter, clusterApi, inFlight },
    );
    if (req.json) req.stdout.write(summaryJson(result) + '\n');
    // The one summary, also with --json (then on stderr, with the progress): each error is shown here, once.
    for (const line of summaryLines(result, logger.colors, req.options.dryRun, widthOf(stream))) logger.info(line);
    (result.ok ? logger.info : logger.error)(`log of this run: ${displayPath(runLog.path)}`);
    return { code: result.ok ? 0 : 1, result, logFile: runLog.path };
  } finally {
    untrack();
    await pool?.closeAll();
    clusterApi?.close();
    runLog.close();
    lock?.release();
  }
}
