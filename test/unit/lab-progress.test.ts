// Progress of the lab's long parts without a terminal: plain lines, order, and how failures end it.
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { FailureError } from '../../src/errors.ts';
import { runSteps, useLiveRenderer } from '../../src/lab/progress.ts';

function capture() {
  const stream = new PassThrough();
  let text = '';
  stream.on('data', (c) => (text += String(c)));
  return { stream, text: () => text };
}

describe('lab progress', () => {
  it('prints plain lines (no escape codes) when the stream is not a terminal', async () => {
    const out = capture();
    await runSteps([{ title: 'Boot node-0', run: async (update) => update('waiting for sshd') }], { stream: out.stream, env: {}, concurrent: false });
    expect(out.text()).toMatch(/^Boot node-0 \.\.\.\n  Boot node-0: waiting for sshd\nBoot node-0: done \(\d+\.\d s\)\n$/);
    expect(out.text()).not.toMatch(/\x1b\[/);
    expect(useLiveRenderer({ stream: out.stream, env: {} })).toBe(false);
    expect(useLiveRenderer({ stream: process.stdout, env: { CI: 'true' } })).toBe(false);
  });

  it('stops at the first failure of steps in order and rethrows that error', async () => {
    const out = capture();
    const ran: string[] = [];
    const boom = new FailureError('root filesystem failed');
    await expect(runSteps([
      { title: 'a', run: async () => { ran.push('a'); throw boom; } },
      { title: 'b', run: async () => { ran.push('b'); } },
    ], { stream: out.stream, env: {}, concurrent: false })).rejects.toBe(boom);
    expect(ran).toEqual(['a']);
    expect(out.text()).toMatch(/^a: FAILED$/m);
  });

  it('runs every parallel step to its end and reports all failures together', async () => {
    const out = capture();
    const ran: string[] = [];
    const err = await runSteps(['x', 'y', 'z'].map((t) => ({
      title: `Boot ${t}`,
      run: async () => {
        ran.push(t);
        if (t !== 'y') throw new FailureError(`${t} did not answer`);
      },
    })), { stream: out.stream, env: {}, concurrent: true }).catch((e: unknown) => e);
    expect(ran.sort()).toEqual(['x', 'y', 'z']);
    expect(err).toBeInstanceOf(FailureError);
    expect((err as Error).message).toBe('2 steps failed:\n  Boot x: x did not answer\n  Boot z: z did not answer');
  });
});
