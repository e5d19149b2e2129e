// --json for a command whose report is lines of text: the lines it would print go into one JSON
// object instead, {ok, ...fields, lines}, so a script reads one shape from every command.
import { Writable } from 'node:stream';
import { sayJson, type CliContext } from './command.ts';

// A writable that keeps every line written to it.
function lineCollector(): { stream: Writable; lines: string[] } {
  const lines: string[] = [];
  let partial = '';
  const stream = new Writable({
    write(chunk, _enc, done) {
      const parts = (partial + String(chunk)).split('\n');
      partial = parts.pop()!;
      lines.push(...parts);
      done();
    },
    final(done) {
      if (partial) lines.push(partial);
      done();
    },
  });
  return { stream, lines };
}

/**
 * Runs `work` as the command would run without --json, except that with --json its stdout lines are
 * collected and printed as one object: {ok: true, ...fields, lines} (failures are printed by the
 * CLI as {ok: false, ..., error}). `fields` is read after the work, for what it found.
 */
export async function reportLines(ctx: CliContext, work: (ctx: CliContext) => Promise<number>, fields: () => Record<string, unknown> = () => ({})): Promise<number> {
  if (ctx.values.json !== true) return work(ctx);
  const out = lineCollector();
  const code = await work({ ...ctx, stdout: out.stream });
  sayJson(ctx.stdout, { ok: code === 0, ...fields(), lines: out.lines });
  return code;
}
