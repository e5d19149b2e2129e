// What a person sees in a real terminal (a tmux pane of 80 and of 200 columns): help that fits the
// width; the progress of a run against machines that do not answer (a loopback port where nothing
// listens) showing the step and every machine being reached, then each retry, before any result;
// one summary; NO_COLOR and piped output without color codes.
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Tmux, shellQuote } from '../helpers/tmux.ts';
import { loopbackProject } from './safety.helpers.ts';

const HARDWAY = `node ${shellQuote(join(import.meta.dirname, '../../bin/hardway.mjs'))}`;
const KEY = join(import.meta.dirname, '../fixtures/ssh/client_ed25519');
const MACHINES = ['server', 'node-0', 'node-1'];
// eslint-disable-next-line no-control-regex
const COLOR = /\x1b\[[0-9;]*m/;

const tmux = new Tmux();
afterAll(() => tmux.close());

/** Every line of a screen read with wrapped lines joined: what the program printed as one line. */
const printed = (screen: string) => screen.split('\n').filter((l) => l !== '');

describe.each([80, 200])('in a terminal of %i columns', (columns) => {
  it('help fits the width and uses it', async () => {
    const top = tmux.run(`${HARDWAY} --help`, columns, { rows: 80 });
    expect(await tmux.watch(top)).toBe(0);
    const lines = printed(tmux.screen(top, { joined: true }));
    expect(lines[0]).toBe('hardway: build a Kubernetes cluster the hard way over SSH, idempotently.');
    for (const l of lines) expect(l.length, l).toBeLessThanOrEqual(columns);
    const certs = tmux.run(`${HARDWAY} certs --help`, columns, { rows: 80 });
    expect(await tmux.watch(certs)).toBe(0);
    const help = printed(tmux.screen(certs, { joined: true }));
    expect(help).toContain('Examples:');
    const widest = Math.max(...help.map((l) => l.length));
    expect(widest).toBeLessThanOrEqual(columns);
    expect(widest).toBeGreaterThan(columns - 15);
  });

  it('a run against machines that do not answer: the step and each machine at once, each retry, then one summary line per machine', async () => {
    const p = loopbackProject();
    const pane = tmux.run(`${HARDWAY} pin-hosts -i ${shellQuote(KEY)}`, columns, { cwd: p.dir, env: { TERM: 'xterm-256color' } });
    const seen = { header: false, reached: new Set<string>(), retries: new Set<string>(), resultBeforeReached: false, summaryBeforeRetries: false };
    const code = await tmux.watch(pane, (screen) => {
      if (/pin-hosts: Pin every machine name/.test(screen)) seen.header = true;
      for (const m of MACHINES) {
        // The line under the step for a machine: being reached, or already on a retry.
        if (new RegExp(`${m}: (connecting to root@127\\.0\\.0\\.9:9|no answer)`).test(screen)) seen.reached.add(m);
        for (const [n, wait] of [[2, '0.5'], [3, '1'], [4, '2']] as const) {
          if (screen.includes(`${m}: no answer (connection refused), retry ${n} of 4 in ${wait} s`)) seen.retries.add(`${m} ${n}`);
        }
        if (screen.includes(`${m}: unreachable`) && seen.reached.size < MACHINES.length) seen.resultBeforeReached = true;
      }
      if (screen.includes('Summary:') && seen.retries.size < 6) seen.summaryBeforeRetries = true;
    });
    expect(code).toBe(1);
    expect(seen.header).toBe(true);
    expect([...seen.reached].sort()).toEqual([...MACHINES].sort());
    // Every retry is on screen until the next: the last two stay 1 s and 2 s, long enough for any
    // reader (the 0.5 s one is checked line by line in progress.test.ts).
    for (const m of MACHINES) expect([...seen.retries].filter((r) => r.startsWith(`${m} `)), m).toEqual(expect.arrayContaining([`${m} 3`, `${m} 4`]));
    expect(seen.resultBeforeReached).toBe(false);
    expect(seen.summaryBeforeRetries).toBe(false);
    const screen = tmux.screen(pane, { joined: true });
    // Each machine's error once; a line per machine in the summary; nothing wider than the terminal.
    expect(screen.split('(gave up after 4 attempts)')).toHaveLength(MACHINES.length + 1);
    const summary = printed(screen).slice(printed(screen).indexOf('Summary:'));
    expect(summary.filter((l) => /^ {2}\S/.test(l)).map((l) => l.trim().split(/\s+/).slice(0, 2).join(' '))).toEqual(MACHINES.map((m) => `${m} unreachable`));
    // The hint the three machines share, once, for all of them.
    expect(screen.split('check that the machine is up')).toHaveLength(2);
    expect(summary).toContain('0 ok, 0 changed, 0 failed, 3 unreachable (0 changes)');
    expect(summary.at(-2)).toMatch(/^log of this run: logs\/\S+-pin-hosts-\d+\.log$/);
    for (const l of summary) expect(l.length, l).toBeLessThanOrEqual(columns);
    // A terminal gets color: the outcome words are painted.
    expect(tmux.screen(pane, { escapes: true })).toMatch(COLOR);
  });
});

describe('plain output', () => {
  it('NO_COLOR: the same progress and summary without a color code', async () => {
    const p = loopbackProject();
    const pane = tmux.run(`${HARDWAY} pin-hosts -i ${shellQuote(KEY)}`, 100, { cwd: p.dir, env: { NO_COLOR: '1', TERM: 'xterm-256color' } });
    expect(await tmux.watch(pane)).toBe(1);
    const screen = tmux.screen(pane, { escapes: true });
    expect(screen).not.toMatch(COLOR);
    expect(screen).toContain('Summary:');
  });

  it('piped: plain lines, one per event, no spinner and no escape code at all', async () => {
    const p = loopbackProject();
    const pane = tmux.run(`${HARDWAY} pin-hosts -i ${shellQuote(KEY)} | cat`, 100, { cwd: p.dir, env: { TERM: 'xterm-256color' } });
    expect(await tmux.watch(pane)).toBe(0); // the exit code of cat
    const screen = tmux.screen(pane, { escapes: true, joined: true });
    expect(screen).not.toContain('\x1b');
    const lines = printed(screen);
    expect(lines[0]).toBe("==> pin-hosts: Pin every machine name in /etc/hosts and cloud-init's hosts template (3 machines)");
    expect(new Set(lines.slice(1, 4))).toEqual(new Set(MACHINES.map((m) => `${m}: connecting to root@127.0.0.9:9`)));
    expect(lines).toContain('node-1: no answer (connection refused), retry 4 of 4 in 2 s');
  });
});
