// Progress at once, one summary: against machines that do not answer (a loopback port where
// nothing listens), the step's header comes first, then a line per machine being reached, then
// every retry as it is scheduled, and only then the results; at the end one line per machine, each
// error once. Against a listener that never answers, the first lines come before any timeout. Timing is not asserted: the order of what appears is (bench/first-output.ts measures
// the time to the first lines).
import { writeFileSync } from 'node:fs';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli.ts';
import { hardway } from './certs.helpers.ts';
import { loopbackProject } from './safety.helpers.ts';

const MACHINES = ['server', 'node-0', 'node-1'];
/** A key to offer: without one, no connection is even tried. */
const KEY = join(import.meta.dirname, '../fixtures/ssh/client_ed25519');
const GAVE_UP = '(gave up after 4 attempts)';

/** Index of the first line matching `re`, -1 if none. */
const at = (lines: string[], re: RegExp) => lines.findIndex((l) => re.test(l));

describe('progress and summary against machines that do not answer', () => {
  it('one step: header, a line per machine being reached, each retry, then results; the summary says unreachable, each error once', async () => {
    const p = loopbackProject();
    const r = await hardway(p, 'pin-hosts', '-i', KEY);
    expect(r.code).toBe(1);
    const lines = r.stdout.split('\n');
    expect(lines[0]).toBe("==> pin-hosts: Pin every machine name in /etc/hosts and cloud-init's hosts template (3 machines)");
    expect(new Set(lines.slice(1, 4))).toEqual(new Set(MACHINES.map((m) => `${m}: connecting to root@127.0.0.9:9`)));
    const firstResult = at(lines, /: pin-hosts: /);
    for (const m of MACHINES) {
      const retries = ['retry 2 of 4 in 0.5 s', 'retry 3 of 4 in 1 s', 'retry 4 of 4 in 2 s'].map((t) => lines.indexOf(`${m}: no answer (connection refused), ${t}`));
      expect(retries.every((i) => i > 3), m).toBe(true);
      expect([...retries].sort((a, b) => a - b), m).toEqual(retries);
      expect(retries[2]!, m).toBeLessThan(lines.indexOf(`${m}: pin-hosts: unreachable`));
      expect(lines.indexOf(`${m}: pin-hosts: unreachable`)).toBeGreaterThanOrEqual(firstResult);
    }
    expect(r.stdout.split(GAVE_UP)).toHaveLength(MACHINES.length + 1);
    expect(r.stdout).toMatch(/\nSummary:\n {2}server {2}unreachable {2}pin-hosts: cannot connect to root@127\.0\.0\.9:9:/);
    expect(r.stdout).toMatch(/\n0 ok, 0 changed, 0 failed, 3 unreachable \(0 changes\)\nlog of this run: \S+\.log\n$/);
  });

  it('up: the first step and its machines show before the at-once round reaches them; no row per step not run', async () => {
    const p = loopbackProject();
    // pki/ made first: a first up (no CA yet) would stop at its preflight (preflight.test.ts).
    expect((await hardway(p, 'certs')).code).toBe(0);
    const r = await hardway(p, 'up', '--keep-going', '-i', KEY);
    expect(r.code).toBe(1);
    const lines = r.stdout.split('\n').filter((l) => !l.startsWith('pki: ') && !l.startsWith('warning: '));
    expect(lines[0]).toMatch(/^==> preflight: /);
    expect(new Set(lines.slice(1, 4))).toEqual(new Set(MACHINES.map((m) => `${m}: connecting to root@127.0.0.9:9`)));
    // Each machine's error once, whatever the number of steps; the summary has a line per machine.
    expect(r.stdout.split(GAVE_UP)).toHaveLength(MACHINES.length + 1);
    const summary = lines.slice(lines.indexOf('Summary:'));
    expect(summary.filter((l) => /^ {2}\S/.test(l)).map((l) => l.trim().split(/\s+/).slice(0, 2).join(' '))).toEqual(MACHINES.map((m) => `${m} unreachable`));
    expect(summary.join('\n')).not.toMatch(/distribute|skipped/);
    // No header for a step whose machines all failed before it (api-proxy has none of its own here: it says so).
    expect(r.stdout).not.toMatch(/^==> (distribute|bootstrap-etcd|containerd|routes|verify):/m);
  });
});

describe('progress at once against a machine that never answers', () => {
  it('the header and "connecting to" appear within 1 s, long before the 20 s handshake timeout', async () => {
    // A listener that takes the connection and never says a word: SSH waits for its banner.
    const held: Socket[] = [];
    const silent = createServer((s) => void held.push(s));
    await new Promise<void>((ok) => silent.listen(0, '127.0.0.1', ok));
    const port = (silent.address() as AddressInfo).port;
    const p = loopbackProject({ machines: '10.240.0.10 server.kubernetes.local server\n' });
    writeFileSync(join(p.dir, 'ssh_config'), `Host *\n  HostName 127.0.0.1\n  Port ${port}\n`);
    const started = Date.now();
    let text = '';
    let firstAt: number | undefined;
    let firstText = '';
    const stdout = new Writable({
      write(c, _e, done) {
        text += String(c);
        if (firstAt === undefined && text.includes('connecting to')) [firstAt, firstText] = [Date.now() - started, text];
        done();
      },
    });
    const stderr = new Writable({ write(_c, _e, done) { done(); } });
    const run = main(['pin-hosts', '-i', KEY, '--machines', p.machines], { stdout, stderr, cwd: p.dir, env: process.env });
    try {
      while (firstAt === undefined && Date.now() - started < 5_000) await new Promise((ok) => setTimeout(ok, 20));
      expect(firstAt, text).toBeLessThan(1_000);
      expect(firstText.split('\n').slice(0, 2)).toEqual([expect.stringMatching(/^==> pin-hosts: /), `server: connecting to root@127.0.0.1:${port}`]);
      // The line is printed as the connection starts: its accept may reach this loop a moment later (a loaded host).
      while (held.length === 0 && Date.now() - started < 5_000) await new Promise((ok) => setTimeout(ok, 20));
      expect(held.length, 'the connection reached the silent listener').toBe(1);
    } finally {
      // Let the run end: the held connection drops and every retry is refused.
      silent.close();
      for (const s of held) s.destroy();
      await run;
    }
  }, 30_000);
});
