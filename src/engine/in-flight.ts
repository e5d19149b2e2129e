// What a run is doing right now, for an interrupt to say: which step runs on which machine, and
// where the run's log is. A signal reaches the process once, for every run in it, so the runs
// register here, process-wide, as local commands do for their abort (src/transport/local.ts).
import { displayPath } from '../input-file.ts';

/** One run's record: the steps running on each machine now. */
export class InFlight {
  private readonly running = new Map<string, Set<string>>();
  /** The step shown last, with its machines: what is being connected to and planned before any machine runs it. */
  private shown?: { step: string; hosts: string[] };

  constructor(
    readonly command: string,
    readonly logFile: string,
  ) {}

  /** `step` is shown as started on `hosts` (its machines are reached and planned first). */
  announce(step: string, hosts: string[]): void {
    this.shown = { step, hosts };
  }

  /** `step` started on `host`. */
  start(step: string, host: string): void {
    const hosts = this.running.get(step) ?? new Set<string>();
    hosts.add(host);
    this.running.set(step, hosts);
  }

  /** `step` ended on `host`, however it ended. */
  end(step: string, host: string): void {
    const hosts = this.running.get(step);
    hosts?.delete(host);
    if (hosts?.size === 0) this.running.delete(step);
  }

  /** The lines an interrupt prints for this run: each step with the machines it was running on, then the log. */
  lines(): string[] {
    const steps = [...this.running].map(([step, hosts]) => `${this.command}: step ${step} was running on ${[...hosts].join(', ')}`);
    const starting = this.shown ? `${this.command}: step ${this.shown.step} was starting on ${this.shown.hosts.join(', ')} (connecting, planning)` : `${this.command}: no step had started yet`;
    return [...(steps.length ? steps : [starting]), `log of this run: ${displayPath(this.logFile)}`];
  }
}

const runs = new Set<InFlight>();
const phases = new Set<string>();

/** Registers what a command does before its run (its preflight, making pki/), said as it is, until the returned function is called. */
export function trackPhase(line: string): () => void {
  phases.add(line);
  return () => phases.delete(line);
}

/** Registers a run until the returned function is called (its end). */
export function trackRun(run: InFlight): () => void {
  runs.add(run);
  return () => runs.delete(run);
}

/** What every run of the process was doing (and what came before its run), for the interrupt's message (none: no run). */
export function inFlightLines(): string[] {
  return [...phases, ...[...runs].flatMap((r) => r.lines())];
}
