// Progress for the long parts of the lab (building the root, booting machines): listr2 on a
// terminal, plain lines otherwise (CI=true, output not a TTY, or a stream that is not stdout).
import type { Writable } from 'node:stream';
import { Listr } from 'listr2';
import { FailureError, isExpectedError } from '../errors.ts';

/** One unit of work with a title; `update` shows a short progress line. */
export interface ProgressStep {
  title: string;
  run(update: (line: string) => void): Promise<void>;
}

/** How progress is shown. */
export interface ProgressOptions {
  stream: Writable;
  env: NodeJS.ProcessEnv;
}

/** True when listr2's live renderer may be used: stdout is a terminal and this is not CI. */
export function useLiveRenderer(o: ProgressOptions): boolean {
  return o.stream === process.stdout && process.stdout.isTTY === true && !o.env.CI;
}

/** Runs steps in order (stopping at a failure) or in parallel (each to its end); then throws the failures together. */
export async function runSteps(steps: ProgressStep[], o: ProgressOptions & { concurrent: boolean }): Promise<void> {
  const errors: Array<{ title: string; error: unknown }> = [];
  const guarded = steps.map((s) => ({
    title: s.title,
    run: async (update: (line: string) => void) => {
      try {
        await s.run(update);
      } catch (error) {
        errors.push({ title: s.title, error });
        throw error;
      }
    },
  }));
  if (useLiveRenderer(o)) {
    const list = new Listr(
      guarded.map((s) => ({ title: s.title, task: async (_ctx: unknown, task: { output: string }) => s.run((l) => (task.output = l)) })),
      { concurrent: o.concurrent, exitOnError: !o.concurrent, rendererOptions: { collapseErrors: false } },
    );
    await list.run().catch(() => undefined);
  } else {
    const plain = async (s: (typeof guarded)[number]) => {
      const started = Date.now();
      o.stream.write(`${s.title} ...\n`);
      try {
        await s.run((l) => o.stream.write(`  ${s.title}: ${l}\n`));
        o.stream.write(`${s.title}: done (${((Date.now() - started) / 1000).toFixed(1)} s)\n`);
      } catch {
        o.stream.write(`${s.title}: FAILED\n`);
      }
    };
    if (o.concurrent) await Promise.all(guarded.map(plain));
    else for (const s of guarded) if (errors.length === 0) await plain(s); // in order: stop at the first failure
  }
  if (errors.length === 1) throw errors[0]!.error;
  if (errors.length > 1) {
    const text = errors.map(({ title, error }) => `${title}: ${isExpectedError(error) ? error.message : String(error)}`);
    throw new FailureError(`${errors.length} steps failed:\n${text.map((t) => `  ${t}`).join('\n')}`);
  }
}
