// A real pseudo-terminal for tests of what a person sees: a command run in a tmux pane of a given
// size, its screen read as tmux shows it (with or without the escape codes of its colors). Each
// test server has a socket of its own and no configuration file, so nothing of the user's tmux
// is touched or read.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/** The line a pane prints when its command has ended: `[exit N]`. */
const EXIT = /^\[exit (\d+)\]$/m;

/** One tmux server for a test file; each `run` opens a session (a pane) in it. */
export class Tmux {
  /** The server's socket, in a directory of its own that close() removes. */
  private readonly dir = mkdtempSync(join(tmpdir(), 'hw-tmux-'));
  private sessions = 0;

  private tmux(...args: string[]): string {
    return execFileSync('tmux', ['-S', join(this.dir, 'socket'), '-f', '/dev/null', ...args], { encoding: 'utf8' });
  }

  /**
   * Starts `command` (a shell command line) in a new pane of `columns` x `rows`, with `env` set for it
   * and CI unset (hardway draws plain lines under CI); returns the pane's name. The pane stays
   * after the command, which prints `[exit N]` as its last line.
   */
  run(command: string, columns: number, opts: { rows?: number; env?: Record<string, string>; cwd?: string } = {}): string {
    const name = `p${++this.sessions}`;
    const env = Object.entries(opts.env ?? {}).map(([k, v]) => `${k}=${shellQuote(v)}`).join(' ');
    const line = `${opts.cwd ? `cd ${shellQuote(opts.cwd)} && ` : ''}env -u CI ${env} ${command}; echo "[exit $?]"; exec sleep 600`;
    this.tmux('new-session', '-d', '-s', name, '-x', String(columns), '-y', String(opts.rows ?? 60), line);
    this.tmux('set-option', '-t', name, 'history-limit', '5000');
    return name;
  }

  /** The pane's text: the whole history (`joined`: lines tmux wrapped joined again), with the color codes when `escapes`. */
  screen(name: string, opts: { joined?: boolean; escapes?: boolean } = {}): string {
    return this.tmux('capture-pane', '-p', '-t', name, '-S', '-', '-E', '-', ...(opts.joined ? ['-J'] : []), ...(opts.escapes ? ['-e'] : []))
      .replace(/\n+$/, '\n');
  }

  /** Reads the screen every `everyMs` until the command has ended; each screen read goes to `look`. Returns the exit code. */
  async watch(name: string, look: (screen: string) => void = () => undefined, timeoutMs = 60_000, everyMs = 40): Promise<number> {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const screen = this.screen(name);
      look(screen);
      const done = EXIT.exec(screen);
      if (done) return Number(done[1]);
      if (Date.now() > until) throw new Error(`the command in pane ${name} did not end within ${timeoutMs} ms; its screen:\n${screen}`);
      await sleep(everyMs);
    }
  }

  /** Ends the tmux server and every pane in it, and removes its socket. */
  close(): void {
    try {
      this.tmux('kill-server');
    } catch {
      // Already gone: nothing to end.
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Quotes a word for sh. */
export function shellQuote(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}
