// Read requests over a real shell (dash): the files of a batch come back through one `cat | base64`
// (the blob line), byte for byte, beside probes and stats, and a blob whose length does not add
// up (a file changed between its stat and its read) makes the batch ask those files again alone.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createFacts } from '../../src/engine/facts.ts';
import { shellProbe, TEST_PROBES } from './facts.helpers.ts';
import { sh } from '../../src/shell.ts';
import { LocalTransport } from '../../src/transport/local.ts';
import type { ExecResult, Transport } from '../../src/transport/types.ts';

function files(): { dir: string; a: string; b: string; empty: string; binary: string } {
  const dir = mkdtempSync(join(tmpdir(), 'facts-reads-'));
  const a = join(dir, 'a.conf'); writeFileSync(a, 'line one\nline two\n');
  const b = join(dir, 'b.conf'); writeFileSync(b, 'no newline at the end');
  const empty = join(dir, 'empty'); writeFileSync(empty, '');
  const binary = join(dir, 'bin'); writeFileSync(binary, Buffer.from([0, 255, 10, 13, 0, 42]));
  return { dir, a, b, empty, binary };
}

/** The local transport, recording each facts script it ran and rewriting its stdout with `edit`. */
function recording(edit: (stdout: string) => string = (s) => s): { transport: Transport; scripts: string[] } {
  const local = new LocalTransport({ machine: 'jumpbox' });
  const scripts: string[] = [];
  const transport = Object.create(local) as Transport;
  transport.exec = async (cmd, opts) => {
    scripts.push(cmd.text);
    const r: ExecResult = await local.exec(cmd, opts);
    return { ...r, stdout: edit(r.stdout) };
  };
  return { transport, scripts };
}

describe('facts reads', () => {
  it('return every file byte for byte through one blob line, in order, beside stats and probes of the same batch', async () => {
    const f = files();
    const { transport, scripts } = recording();
    const facts = createFacts(transport, undefined, { probes: TEST_PROBES });
    const read = await facts.read([f.a, f.empty, join(f.dir, 'missing'), f.binary, f.b, f.a]);
    expect(read.get(f.a)?.content?.toString()).toBe('line one\nline two\n');
    expect(read.get(f.b)?.content?.toString()).toBe('no newline at the end');
    expect(read.get(f.empty)?.content?.length).toBe(0);
    expect([...read.get(f.binary)!.content!]).toEqual([0, 255, 10, 13, 0, 42]);
    expect(read.get(join(f.dir, 'missing'))).toEqual({ path: join(f.dir, 'missing'), exists: false });
    expect(scripts).toHaveLength(1);

    const mixed = await facts.batch([
      { op: 'S', path: f.b }, { op: 'R', path: f.b }, shellProbe.ask(sh`printf 'x\\ny\\n'`), { op: 'R', path: f.a },
    ]);
    expect(mixed[1]).toMatchObject({ exists: true, size: 21, content: Buffer.from('no newline at the end') });
    expect(mixed[2]).toEqual({ code: 0, stdout: 'x\ny\n' });
    expect((mixed[3] as { content: Buffer }).content.toString()).toBe('line one\nline two\n');
    expect(scripts).toHaveLength(2);
  });

  it('asks the files again, each with its own base64, when the blob does not match their sizes', async () => {
    const f = files();
    // What a file rewritten between the batch's stat and its cat looks like: a blob of another length.
    const { transport, scripts } = recording((out) => out.replace(/^B .*$/m, `B ${Buffer.from('short').toString('base64')}`));
    const read = await createFacts(transport).read([f.a, f.b]);
    expect(read.get(f.a)?.content?.toString()).toBe('line one\nline two\n');
    expect(read.get(f.b)?.content?.toString()).toBe('no newline at the end');
    expect(scripts).toHaveLength(2);
    expect(scripts[0]).toContain('blob=1;');
    expect(scripts[1]).toContain('blob=;');
  });
});
