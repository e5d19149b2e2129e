// The summary at the end of a run: one line per machine (ok, changed, failed, unreachable), each
// error once and in full, why steps did not run said once, the totals.
import { describe, expect, it } from 'vitest';
import type { HostResult } from '../../src/engine/types.ts';
import { summarize, summaryJson, summaryLines } from '../../src/ui/summary.ts';
import { palette } from '../../src/ui/terminal.ts';

const plain = palette(false);
const r = (step: string, machine: string, status: HostResult['status'], changes = 0, extra: Partial<HostResult> = {}): HostResult => ({ step, machine, status, changes, ...extra });
const STOPPED = 'not run: step pin-hosts failed (--keep-going runs later steps on the machines that did not fail)';

describe('summaryLines', () => {
  it('one line per machine, whatever the number of steps', () => {
    const run = summarize([
      r('pin-hosts', 'server', 'unchanged'), r('pin-hosts', 'node-0', 'changed', 2),
      r('routes', 'server', 'unchanged'), r('routes', 'node-0', 'changed', 1),
    ]);
    expect(summaryLines(run, plain, false)).toEqual([
      'Summary:',
      '  server  ok       2 steps, nothing to change',
      '  node-0  changed  3 changes in 2 steps',
      '1 ok, 1 changed, 0 failed, 0 unreachable (3 changes)',
    ]);
  });

  it('a dry run says "would change" and counts planned changes', () => {
    const run = summarize([r('pin-hosts', 'node-0', 'changed', 2), r('pin-hosts', 'node-1', 'unchanged')]);
    expect(summaryLines(run, plain, true)).toEqual([
      'Summary (dry run: nothing was changed):',
      '  node-0  would change  2 planned changes in 1 step',
      '  node-1  ok            1 step, nothing to change',
      '1 ok, 1 would change, 0 failed, 0 unreachable (2 planned changes)',
    ]);
  });

  it('a failure: the step and the whole error once, the later steps not run said once for all machines', () => {
    const error = 'node-1: command failed (exit 1): systemctl restart containerd\n  Job for containerd.service failed.\n  hint: journalctl -u containerd';
    const run = summarize([
      r('pin-hosts', 'server', 'changed', 1), r('pin-hosts', 'node-1', 'failed', 0, { error }),
      r('distribute', 'server', 'skipped', 0, { error: STOPPED }), r('distribute', 'node-1', 'skipped', 0, { error: STOPPED }),
      r('routes', 'server', 'skipped', 0, { error: STOPPED }), r('routes', 'node-1', 'skipped', 0, { error: STOPPED }),
    ]);
    const lines = summaryLines(run, plain, false, 200);
    expect(lines).toEqual([
      'Summary:',
      '  server  changed  1 change in 1 step; 2 steps not run',
      '  node-1  failed   pin-hosts: command failed (exit 1): systemctl restart containerd; 2 steps not run',
      '  node-1: Job for containerd.service failed.',
      'hint: journalctl -u containerd',
      'Not run: distribute, routes: step pin-hosts failed (--keep-going runs later steps on the machines that did not fail)',
      '0 ok, 1 changed, 1 failed, 0 unreachable (1 change)',
    ]);
    expect(lines.join('\n').split('Job for containerd').length).toBe(2);
  });

  it('one line per failed machine; what several share (stderr, a hint) once, naming them (issue 36 point 6)', () => {
    const unreachable = (m: string, ip: string) => r('pin-hosts', m, 'failed', 0, { unreachable: true,
      error: `${m}: cannot connect to root@${ip}:22: connection refused (gave up after 4 attempts)\n  hint: check that the machine is up, its address and port are right, and sshd is running` });
    const denied = r('pin-hosts', 'node-2', 'failed', 0, { error: 'node-2: command failed (exit 1): cat /etc/hosts\n  Permission denied\n  hint: log in as root' });
    const lines = summaryLines(summarize([unreachable('server', '10.240.0.10'), unreachable('node-0', '10.240.0.20'), unreachable('node-1', '10.240.0.21'), denied]), plain, false, 200);
    expect(lines).toEqual([
      'Summary:',
      '  server  unreachable  pin-hosts: cannot connect to root@10.240.0.10:22: connection refused (gave up after 4 attempts)',
      '  node-0  unreachable  pin-hosts: cannot connect to root@10.240.0.20:22: connection refused (gave up after 4 attempts)',
      '  node-1  unreachable  pin-hosts: cannot connect to root@10.240.0.21:22: connection refused (gave up after 4 attempts)',
      '  node-2  failed       pin-hosts: command failed (exit 1): cat /etc/hosts',
      '  node-2: Permission denied',
      'hint (server, node-0, node-1): check that the machine is up, its address and port are right, and sshd is running',
      'hint (node-2): log in as root',
      '0 ok, 0 changed, 1 failed, 3 unreachable (0 changes)',
    ]);
    // At 80 columns every line fits.
    expect(Math.max(...summaryLines(summarize([unreachable('server', '10.240.0.10'), unreachable('node-0', '10.240.0.20')]), plain, false, 80).map((l) => l.length))).toBeLessThanOrEqual(80);
  });

  it('a machine that could not be reached is "unreachable", not "failed"; a long line wraps under its column (80 by default)', () => {
    const run = summarize([
      r('pin-hosts', 'node-0', 'unchanged'),
      r('pin-hosts', 'node-1', 'failed', 0, { error: 'node-1: cannot connect to root@127.0.0.9:9: connection refused (gave up after 4 attempts)', unreachable: true }),
    ]);
    expect(summaryLines(run, plain, false)).toEqual([
      'Summary:',
      '  node-0  ok           1 step, nothing to change',
      '  node-1  unreachable  pin-hosts: cannot connect to root@127.0.0.9:9: connection',
      '                       refused (gave up after 4 attempts)',
      '1 ok, 0 changed, 0 failed, 1 unreachable (0 changes)',
    ]);
    expect(JSON.parse(summaryJson(run)).results[1]).toMatchObject({ machine: 'node-1', status: 'failed', unreachable: true });
    expect(JSON.parse(summaryJson(run)).results[0]).not.toHaveProperty('unreachable');
  });

  it('a machine where no step ran is "not run"; a machine\'s own earlier failure is not repeated as a reason', () => {
    const run = summarize([
      r('pin-hosts', 'node-0', 'failed', 0, { error: 'node-0: boom' }),
      r('routes', 'node-0', 'skipped', 0, { error: 'not run: failed in step pin-hosts' }),
      r('routes', 'node-1', 'skipped', 0, { error: 'not run: node-0 failed first, and these machines take turns' }),
    ]);
    expect(summaryLines(run, plain, false)).toEqual([
      'Summary:',
      '  node-0  failed   pin-hosts: boom; 1 step not run',
      '  node-1  not run  no step ran here; 1 step not run',
      'Not run: routes: node-0 failed first, and these machines take turns',
      '0 ok, 0 changed, 1 failed, 0 unreachable, 1 not run (0 changes)',
    ]);
  });

  it('colors only the outcome word, and only when asked', () => {
    const run = summarize([r('pin-hosts', 'node-0', 'changed', 1)]);
    expect(summaryLines(run, palette(true), false)[1]).toBe('  node-0  \x1b[33mchanged\x1b[39m  1 change in 1 step');
    expect(summaryLines(run, plain, false).join('')).not.toContain('\x1b');
  });
});
