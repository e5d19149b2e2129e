// Errors wrap like help: at the terminal's width, at 80 columns when stderr is not a terminal; the
// hint keeps a hanging indent, and a command line to copy stays whole on a line of its own.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli.ts';
import { wrapMessage } from '../../src/ui/wrap.ts';
import { unwrapErrors } from '../helpers/unwrap.ts';

const cwd = mkdtempSync(join(tmpdir(), 'hw-wrap-'));
const LONG_DIR = '/tmp/a/rather/long/project/directory/that/makes/the/line/long';

/** Runs the CLI with stderr a pipe (no columns) or a terminal of `columns`; returns stderr. */
async function stderrOf(args: string[], columns?: number): Promise<{ code: number; text: string }> {
  let text = '';
  const sink = () => new Writable({ write(c, _e, done) { text += String(c); done(); } });
  const stderr = Object.assign(sink(), columns ? { isTTY: true, columns } : {});
  const code = await main(args, { stdout: new Writable({ write(_c, _e, done) { done(); } }), stderr, cwd, env: {} });
  return { code, text };
}

const widest = (text: string) => Math.max(...text.trimEnd().split('\n').map((l) => l.length));

describe('error messages wrap', () => {
  it('at 80 columns when stderr is not a terminal: the error, then the hint under its text; the command lines stay whole', async () => {
    const r = await stderrOf(['remove-node', 'node-2', '--dir', LONG_DIR]);
    expect(r.code).toBe(2);
    expect(r.text).toBe([
      'error: "hardway remove-node node-2" drains the machine and removes everything',
      '  hardway installed on it; it runs only with --yes',
      '  hint: run it again with --yes to do it:',
      `        hardway remove-node node-2 --dir ${LONG_DIR} --yes`,
      '        or with --dry-run to see what it would do:',
      `        hardway remove-node node-2 --dir ${LONG_DIR} --dry-run`,
      '',
    ].join('\n'));
  });

  it('at the terminal width: 60 columns, and 200 (one line each)', async () => {
    const narrow = await stderrOf(['cert', 'check'], 60);
    expect(widest(narrow.text)).toBeLessThanOrEqual(60);
    expect(narrow.text.split('\n').length).toBeGreaterThan(3);
    const wide = await stderrOf(['cert', 'check'], 200);
    expect(wide.text).toBe('error: unknown command "cert check"\n  hint: did you mean "hardway certs check" or "hardway certs"? "hardway --help" lists every command\n');
    // The same words either way.
    expect(narrow.text.split(/\s+/)).toEqual(wide.text.split(/\s+/));
  });

  it('leaves short lines and a remote command\'s stderr as they are', () => {
    const text = `error: server: command failed (exit 1): systemctl start etcd\n    ${'x'.repeat(120)}\n  hint: short`;
    expect(wrapMessage(text, 80)).toBe(text);
  });

  it('the tests\' unwrapErrors gives back the message as it was before wrapping', async () => {
    const wrapped = (await stderrOf(['remove-node', 'node-2', '--dir', LONG_DIR])).text;
    const whole = (await stderrOf(['remove-node', 'node-2', '--dir', LONG_DIR], 1000)).text;
    expect(unwrapErrors(wrapped)).toBe(whole);
    const remote = `error: server: command failed (exit 1): true\n  short stderr line`;
    expect(unwrapErrors(remote)).toBe(remote);
  });
});

describe('reports wrap on a terminal (issue 36 point 6)', () => {
  it("certs' lines fit a terminal of 50 columns; to a pipe each stays one line; the same words either way", async () => {
    const { certifiedProject } = await import('./certs.helpers.ts');
    const p = await certifiedProject({ kubeconfigs: true });
    const run = async (columns?: number) => {
      let text = '';
      const stdout = Object.assign(new Writable({ write(c, _e, done) { text += String(c); done(); } }), columns ? { isTTY: true, columns } : {});
      const code = await main(['certs', '--renew', 'service-accounts', '--machines', p.machines], { stdout, stderr: new Writable({ write(_c, _e, done) { done(); } }), cwd: p.dir, env: {} });
      return { code, text };
    };
    const piped = await run();
    expect(piped.code).toBe(0);
    expect(piped.text).toMatch(/^reissued service-accounts \(renewal asked for \(--renew\)\), same key \(it signs every service-account token\)$/m);
    const narrow = await run(50);
    expect(narrow.code).toBe(0);
    expect(widest(narrow.text)).toBeLessThanOrEqual(50);
    expect(narrow.text.split(/\s+/)).toEqual(piped.text.split(/\s+/));
  });
});
