// Download progress: a redrawn bar on a terminal, plain lines otherwise (logs, CI, pipes).
import type { Writable } from 'node:stream';

/** Receives the progress of one download at a time. */
export interface Progress {
  start(label: string, total: number | undefined): void;
  advance(bytes: number): void;
  /** Ends the current download's display (bar or nothing) without a message. */
  end(): void;
}

/** A progress display on `stream`: a bar if it is a TTY, else one line per download. */
export function createProgress(stream: Writable & { isTTY?: boolean; columns?: number }, now: () => number = Date.now): Progress {
  return stream.isTTY ? new Bar(stream, now) : new Lines(stream);
}

/** A progress that shows nothing (tests, --quiet callers). */
export const NO_PROGRESS: Progress = { start() {}, advance() {}, end() {} };

/** Human size: 12.3 MB. */
export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

class Lines implements Progress {
  constructor(private readonly out: Writable) {}
  start(label: string, total: number | undefined): void {
    this.out.write(`  downloading ${label}${total ? ` (${formatBytes(total)})` : ''}\n`);
  }
  advance(): void {}
  end(): void {}
}

class Bar implements Progress {
  private label = '';
  private total: number | undefined;
  private got = 0;
  private lastDraw = 0;
  constructor(
    private readonly out: Writable & { columns?: number },
    private readonly now: () => number,
  ) {}
  start(label: string, total: number | undefined): void {
    this.label = label;
    this.total = total;
    this.got = 0;
    this.lastDraw = 0;
    this.draw();
  }
  advance(bytes: number): void {
    this.got += bytes;
    // Redraw at most ten times a second: a terminal write per chunk would cost more than the download.
    if (this.now() - this.lastDraw >= 100) this.draw();
  }
  end(): void {
    this.draw();
    this.out.write('\n');
  }
  private draw(): void {
    this.lastDraw = this.now();
    const width = 24;
    const size = this.total ? `${formatBytes(this.got)}/${formatBytes(this.total)}` : formatBytes(this.got);
    let bar = '';
    if (this.total) {
      const filled = Math.min(width, Math.round((this.got / this.total) * width));
      bar = ` [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${Math.floor((this.got / this.total) * 100)}%`;
    }
    this.out.write(`\r\x1b[2K  ${this.label}${bar} ${size}`);
  }
}
