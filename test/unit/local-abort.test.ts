// The one local runner stops what it runs when asked (an AbortSignal), and hardway aborts its
// running commands and exits with the shell's code when it is interrupted.
import { describe, expect, it } from 'vitest';
import { handleInterrupts, type InterruptSignal } from '../../src/cli/interrupt.ts';
import { sh } from '../../src/shell.ts';
import { runCommand } from '../../src/transport/local.ts';

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Runs `sleep 30` under a shell that stays (not exec'd), aborts once its pid is printed; the pid. */
async function abortedSleep(opts: { timeoutMs?: number }): Promise<{ pid: number; error: unknown; ms: number }> {
  const controller = new AbortController();
  let pid = 0;
  const started = Date.now();
  const error = await runCommand(sh`sleep 30 & echo $!; wait`, {
    ...opts, signal: controller.signal,
    onStdout: (d) => {
      pid = Number(d.toString().trim());
      controller.abort(new Error('stop'));
    },
  }).then(() => undefined, (e: unknown) => e);
  return { pid, error, ms: Date.now() - started };
}

describe('the local runner on abort', () => {
  it('kills a sleep 30 the command started (in our process group) and rejects with the reason', async () => {
    const { pid, error, ms } = await abortedSleep({});
    expect((error as Error).message).toBe('stop');
    expect(ms).toBeLessThan(5000);
    expect(pid).toBeGreaterThan(0);
    await expect.poll(() => alive(pid), { timeout: 2000 }).toBe(false);
  });

  it('kills a sleep 30 of a command with a group of its own (one with a time limit)', async () => {
    const { pid, error } = await abortedSleep({ timeoutMs: 60_000 });
    expect((error as Error).message).toBe('stop');
    await expect.poll(() => alive(pid), { timeout: 2000 }).toBe(false);
  });

  it('refuses to start under a signal already aborted', async () => {
    const c = new AbortController();
    c.abort(new Error('already'));
    await expect(runCommand(sh`true`, { signal: c.signal })).rejects.toThrow('already');
  });
});

describe('interrupts', () => {
  it('SIGINT, SIGTERM and SIGHUP abort running commands, then exit 130, 143 and 129; the handlers come off', () => {
    const listeners = new Map<InterruptSignal, () => void>();
    const seen: string[] = [];
    const stop = handleInterrupts({
      on: (s, l) => listeners.set(s, l),
      off: (s) => listeners.delete(s),
      exit: (code) => seen.push(`exit ${code}`),
      abort: (reason) => seen.push(`abort: ${reason}`),
    });
    for (const s of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) listeners.get(s)!();
    expect(seen).toEqual([
      'abort: hardway was interrupted (SIGINT)', 'exit 130',
      'abort: hardway was interrupted (SIGTERM)', 'exit 143',
      'abort: hardway was interrupted (SIGHUP)', 'exit 129',
    ]);
    stop();
    expect(listeners.size).toBe(0);
  });
});
