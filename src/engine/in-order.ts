// Progress events of steps that run at the same time, shown as if they ran one after another: the
// earliest unfinished step's events pass straight through; a later step's are held back and shown
// once every step before it has finished. Output stays in step order whatever runs concurrently.
import type { Reporter } from '../ui/reporter.ts';

/** Wraps a reporter for steps numbered 0..n-1 that may run concurrently. */
export class InOrderReporter {
  private head = 0;
  private readonly held = new Map<number, Array<() => unknown>>();
  private readonly finished = new Set<number>();
  private chain: Promise<unknown> = Promise.resolve();

  constructor(private readonly real: Reporter) {}

  /** The reporter to hand to step `i`. */
  forStep(i: number): Reporter {
    return {
      stepStarted: (step, hosts) => this.emit(i, () => this.real.stepStarted(step, hosts)),
      hostFinished: (step, result, details) => this.emit(i, () => this.real.hostFinished(step, result, details)),
      stepFinished: async (step, results) => {
        this.emit(i, () => this.real.stepFinished(step, results));
        this.finish(i);
      },
      // A note says what happens now: shown at once, whatever step is on screen.
      hostNote: (host, text) => this.real.hostNote(host, text),
    };
  }

  /** Marks step `i` as having nothing to show (e.g. skipped), so later steps are not held back by it. */
  skip(i: number): void {
    this.finish(i);
  }

  /** Resolves once everything emitted so far has been shown. */
  async drain(): Promise<void> {
    await this.chain;
  }

  private emit(i: number, event: () => unknown): void {
    if (i === this.head) this.chain = this.chain.then(event);
    else this.held.set(i, [...(this.held.get(i) ?? []), event]);
  }

  private finish(i: number): void {
    this.finished.add(i);
    while (this.finished.has(this.head)) {
      this.head++;
      for (const event of this.held.get(this.head) ?? []) this.chain = this.chain.then(event);
      this.held.delete(this.head);
    }
  }
}
