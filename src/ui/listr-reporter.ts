// listr2 progress on an interactive terminal: one task list per step, one task per machine. The
// engine drives the work; each task just waits for its machine's result.
import { Listr, ListrLogger, ProcessOutput, type ListrTaskWrapper } from 'listr2';
import type { Writable } from 'node:stream';
import type { HostResult } from '../engine/types.ts';
import type { Logger } from './logger.ts';
import { indent, statusText, withoutHost, type Reporter, type StepInfo } from './reporter.ts';

interface Pending {
  resolve(r: HostResult): void;
  task?: Promise<unknown>;
}

/** A reporter that renders listr2 spinners per machine, then prints details and errors. */
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
        pending.set(host, { resolve });
        return {
          title: host,
          task: async (_: unknown, task: ListrTaskWrapper<unknown, never, never>) => {
            const r = await done;
            task.title = `${host}: ${statusText(r, dryRun)}`;
            const why = firstLine(r.error ?? 'failed');
            if (r.status === 'failed') throw new Error(why.startsWith(`${host}: `) ? why : `${host}: ${why}`);
            if (r.status === 'skipped') task.skip(`${host}: skipped`);
          },
        };
      });
      // listr2 draws through its logger's output only (a top-level processOutput is ignored): without
      // it, the progress went to process.stdout, before the one object of --json.
      const logger = new ListrLogger({ processOutput: new ProcessOutput(stream as NodeJS.WriteStream, stream as NodeJS.WriteStream) });
      const list = new Listr(
        [{ title: `${step.name}: ${step.title}`, task: (_ctx, t) => t.newListr(tasks, { concurrent: true, exitOnError: false }) }],
        { concurrent: false, exitOnError: false, registerSignalListeners: false, rendererOptions: { collapseSubtasks: false, logger }, fallbackRendererOptions: { logger } } as never,
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
        if (result.status === 'failed' && result.error) log.error(indent(withoutHost(result.error, result.machine)));
      }
    },
  };
}

function firstLine(text: string): string {
  return text.split('\n')[0]!;
}
