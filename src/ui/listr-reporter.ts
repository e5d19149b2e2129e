// listr2 progress on an interactive terminal: one task list per step, one task per machine. The
// engine drives the work; each task just waits for its machine's result, and its title says what
// is happening to the machine meanwhile (connecting, a retry).
import { Listr, ListrLogger, ProcessOutput, type ListrTaskWrapper } from 'listr2';
import type { Writable } from 'node:stream';
import type { HostResult } from './results.ts';
import type { Logger } from './logger.ts';
import { statusText, type Reporter } from './reporter.ts';

type Task = ListrTaskWrapper<unknown, never, never>;

interface Pending {
  resolve(r: HostResult): void;
  /** The task, once listr2 has started it. */
  task?: Task;
  /** A note that came before the task started. */
  note?: string;
}

/** A reporter that renders listr2 spinners per machine, then prints the details of each change. */
export function listrReporter(logger: Logger, stream: Writable, dryRun: boolean): Reporter {
  let running: Promise<unknown> | undefined;
  let pending = new Map<string, Pending>();
  let details: Array<{ result: HostResult; lines: string[] }> = [];
  let order: string[] = [];
  return {
    stepStarted(step, hosts) {
      pending = new Map();
      details = [];
      order = hosts;
      const tasks = hosts.map((host) => {
        let resolve!: (r: HostResult) => void;
        const done = new Promise<HostResult>((r) => (resolve = r));
        const entry: Pending = { resolve };
        pending.set(host, entry);
        return {
          title: host,
          task: async (_: unknown, task: Task) => {
            entry.task = task;
            if (entry.note) task.title = `${host}: ${entry.note}`;
            const r = await done;
            task.title = `${host}: ${statusText(r, dryRun)}`;
            // The error itself is shown once, in the summary at the end: here the task only fails.
            if (r.status === 'failed') throw new Error(task.title);
            if (r.status === 'skipped') task.skip(`${host}: skipped`);
          },
        };
      });
      // listr2 draws through its logger's output only (a top-level processOutput is ignored): without
      // it, the progress went to process.stdout, before the one object of --json.
      const logger = new ListrLogger({ processOutput: new ProcessOutput(stream as NodeJS.WriteStream, stream as NodeJS.WriteStream) });
      const list = new Listr(
        [{ title: `${step.name}: ${step.title}`, task: (_ctx, t) => t.newListr(tasks, { concurrent: true, exitOnError: false }) }],
        {
          concurrent: false, exitOnError: false, registerSignalListeners: false,
          rendererOptions: { collapseSubtasks: false, showErrorMessage: false, logger }, fallbackRendererOptions: { logger },
        } as never,
      );
      running = list.run().catch(() => undefined);
    },
    hostFinished(_step, result, lines) {
      details.push({ result, lines });
      pending.get(result.machine)?.resolve(result);
    },
    async stepFinished() {
      await running;
      // Details in inventory order, not in the order the machines happened to finish.
      details.sort((a, b) => order.indexOf(a.result.machine) - order.indexOf(b.result.machine));
      for (const { result, lines } of details) {
        const log = logger.host(result.machine);
        for (const line of lines) log.info(`  ${line}`);
      }
    },
    hostNote(host, text) {
      // Only the machines of the step on screen have a line to show it on; the run log has every note.
      const entry = pending.get(host);
      if (!entry) return;
      entry.note = text;
      if (entry.task) entry.task.title = `${host}: ${text}`;
    },
  };
}
