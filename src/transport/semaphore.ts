// A counting semaphore: caps the channels open at once on one SSH connection, because OpenSSH
// refuses sessions beyond MaxSessions (10 by default) and a refused channel is a failed step.

/** Limits concurrent holders to `limit`; waiters are served in arrival order. */
export class Semaphore {
  private active = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(readonly limit: number) {
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`semaphore limit must be a positive integer, got ${limit}`);
  }

  /** Runs fn once a slot is free and releases the slot when it settles. */
  async run<T>(fn: () => Promise<T>): Promise<T> {
    await this.take();
    try {
      return await fn();
    } finally {
      this.release();
    }
  }

  /** Waits for a slot and returns the function that releases it (call it exactly once). */
  async acquire(): Promise<() => void> {
    await this.take();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.release();
    };
  }

  private take(): Promise<void> {
    if (this.active < this.limit) {
      this.active++;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  private release(): void {
    const next = this.waiting.shift();
    // Hand the slot straight to the next waiter so a newcomer cannot overtake it.
    if (next) next();
    else this.active--;
  }
}
