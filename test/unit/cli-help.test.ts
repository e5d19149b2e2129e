// First contact with the CLI: help for every command with examples that run, wrapped to the
// terminal's width (80 when not a terminal); groups list their commands; `help CMD`, `version`;
// "did you mean" for a mistyped command, subcommand, option, step or machine (exit 2).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli.ts';
import { COMMANDS, loadCommand, SUBCOMMAND_GROUPS } from '../../src/commands/index.ts';
import { commandHelp } from '../../src/cli/help.ts';
import { CHECK_LIST } from '../../src/doctor/checks/index.ts';
import { groupPrefixes, resolveArgs } from '../../src/cli/resolve.ts';
import { COMMAND_ALIASES } from '../../src/commands/index.ts';
import { wrap, wrapBlock } from '../../src/ui/wrap.ts';
import { runCli } from '../helpers/cli.ts';
import { commandOf, problemsOf } from '../helpers/command-lines.ts';
import { hardwayCalls } from '../helpers/command-lines.ts';

const cwd = mkdtempSync(join(tmpdir(), 'hw-help-'));
const hw = (...args: string[]) => runCli(args, cwd);

/** Runs the CLI with stdout a terminal of `columns` columns. */
async function onTerminal(columns: number, ...args: string[]): Promise<{ code: number; text: string }> {
  let text = '';
  const stdout = Object.assign(new Writable({ write(c, _e, done) { text += String(c); done(); } }), { isTTY: true, columns });
  const stderr = new Writable({ write(_c, _e, done) { done(); } });
  const code = await main(args, { stdout, stderr, cwd, env: {} });
  return { code, text };
}

const widest = (text: string) => Math.max(...text.split('\n').map((l) => l.length));

describe('help', () => {
  it('every command has an Examples section, and every example runs that command with options it has', async () => {
    for (const entry of COMMANDS) {
      const cmd = await loadCommand(entry);
      expect(cmd.examples.length, entry.name).toBeGreaterThan(0);
      for (const [line, does] of cmd.examples) {
        expect(does.length, line).toBeGreaterThan(5);
        const [words, ...more] = hardwayCalls(line);
        expect(more, line).toEqual([]);
        expect(commandOf(words!), line).toBe(entry.name);
        expect(await problemsOf(words!), line).toEqual([]);
      }
      const help = (await hw(...entry.name.split(' '), '--help')).stdout;
      expect(help, entry.name).toMatch(/\nExamples:\n( {2}# .+\n)+ {2}(sudo )?hardway /);
    }
  });

  it('is at most 80 columns wide when stdout is not a terminal: the top level, every group and every command', async () => {
    const top = await hw('--help');
    expect(top.code).toBe(0);
    expect(widest(top.stdout)).toBeLessThanOrEqual(80);
    for (const g of groupPrefixes(COMMANDS)) expect(widest((await hw(...g.split(' '), '--help')).stdout), g).toBeLessThanOrEqual(80);
    for (const entry of COMMANDS) {
      const r = await hw(...entry.name.split(' '), '--help');
      expect(r.code, entry.name).toBe(0);
      expect(widest(r.stdout), entry.name).toBeLessThanOrEqual(80);
    }
  });

  it('wraps to the width of the terminal, and uses it: 60 and 200 columns', async () => {
    const narrow = await onTerminal(60, 'certs', '--help');
    expect(widest(narrow.text)).toBeLessThanOrEqual(60);
    const wide = await onTerminal(200, 'certs', '--help');
    expect(widest(wide.text)).toBeGreaterThan(100);
    expect(widest(wide.text)).toBeLessThanOrEqual(200);
    // The same words either way.
    const words = (t: string) => t.split(/\s+/).filter((w) => w !== '' && w !== '#');
    expect(words(wide.text)).toEqual(words(narrow.text));
  });

  it('the top level lists every command once, under a group heading, and help and version', async () => {
    const { stdout } = await hw('--help');
    for (const c of COMMANDS) expect(stdout.match(new RegExp(`^ {2}${c.name} {2,}\\S`, 'gm')), c.name).toHaveLength(1);
    expect(stdout).toMatch(/^Machines to build on:$/m);
    expect(stdout).toMatch(/^Day two:$/m);
    expect(stdout).toMatch(/^ {2}help COMMAND +the options and examples of a command$/m);
    expect(stdout).toMatch(/^ {2}version +print the version \(also --version, -V\)$/m);
  });

  it('hardway lab, multipass, etcd and etcd snapshot list their commands; bare, on stderr with exit 2', async () => {
    expect(groupPrefixes(COMMANDS).sort()).toEqual(['etcd', 'etcd snapshot', 'lab', 'multipass']);
    for (const g of groupPrefixes(COMMANDS)) {
      expect(SUBCOMMAND_GROUPS[g], g).toBeTruthy();
      const asked = await hw(...g.split(' '), '--help');
      expect(asked.code).toBe(0);
      expect(asked.stdout).toContain(`Usage: hardway ${g} <command> [options]`);
      for (const c of COMMANDS.filter((x) => x.name.startsWith(`${g} `))) expect(asked.stdout, c.name).toMatch(new RegExp(`^ {2}${c.name} +\\S`, 'm'));
      const bare = await hw(...g.split(' '));
      expect(bare.code).toBe(2);
      expect(bare.stdout).toBe('');
      expect(bare.stderr).toBe(asked.stdout);
      expect((await hw('help', ...g.split(' '))).stdout).toBe(asked.stdout);
    }
  });

  it('hardway help CMD is hardway CMD --help; certs lists certs check as a subcommand', async () => {
    for (const name of ['up', 'certs check', 'lab ssh']) {
      const a = await hw('help', ...name.split(' '));
      expect(a.code).toBe(0);
      expect(a.stdout).toBe((await hw(...name.split(' '), '--help')).stdout);
      expect(a.stdout).toMatch(new RegExp(`^Usage: hardway ${name} `));
    }
    expect((await hw('certs', '--help')).stdout).toMatch(/\nSubcommands:\n {2}certs check +Check every certificate/);
    expect((await hw('help')).stdout).toBe((await hw('--help')).stdout);
  });

  it('version, --version and -V print the version of package.json', async () => {
    for (const a of ['version', '--version', '-V']) expect(await hw(a)).toEqual({ code: 0, stdout: '0.1.0\n', stderr: '' });
  });

  it('version is a command like the others: --json, --help, help version (issue 34 item 13, issue 36 point 8)', async () => {
    for (const a of [['version', '--json'], ['--version', '--json']]) expect(await hw(...a)).toEqual({ code: 0, stdout: '{"ok":true,"version":"0.1.0"}\n', stderr: '' });
    const help = await hw('version', '--help');
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: hardway version \[options\]/);
    expect(help.stdout).toContain('--json');
    expect(await hw('help', 'version')).toEqual(help);
    const typo = await hw('version', '--jsn');
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain('did you mean --json?');
  });

  it('no arguments: the top-level help on stderr, exit 2', async () => {
    const r = await hw();
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('Usage: hardway <command> [options]');
  });

  it("reset's --local says it takes the names out; pin-hosts' that it puts them in", async () => {
    const line = (await hw('reset', '--help')).stdout.replace(/\n\s+/g, ' ');
    expect(line).toMatch(/--local .*reset takes it out/);
    expect((await hw('pin-hosts', '--help')).stdout.replace(/\n\s+/g, ' ')).toMatch(/--local .*pin-hosts puts the block of names in/);
  });

  it("doctor's help lists every registered check, in the order of the report, with the line of what it looks at", async () => {
    const { code, stdout } = await hw('doctor', '--help');
    expect(code).toBe(0);
    // Each check is one item, "- name: looks", whose wrapped lines are indented by two spaces.
    const items = stdout.replace(/\n {2}(?=\S)/g, ' ').split('\n').filter((l) => l.startsWith('- '));
    expect(items).toEqual(CHECK_LIST.map((c) => `- ${c.name}: ${c.looks}`));
    for (const c of CHECK_LIST) expect(c.looks, c.name).toMatch(/\S/);
  });

  it('--image is split into names that say what they are; the old name says the new one', async () => {
    const options = async (name: string) => Object.keys((await loadCommand(COMMANDS.find((c) => c.name === name)!)).options);
    expect(await options('smoke')).toContain('web-image');
    expect(await options('doctor')).toContain('pull-image');
    expect(await options('multipass up')).toContain('vm-image');
    for (const c of COMMANDS) expect(await options(c.name), c.name).not.toContain('image');
    const old = await hw('smoke', '--image', 'nginx');
    expect(old.code).toBe(2);
    expect(old.stderr).toMatch(/^error: --image is now --web-image for "hardway smoke"\n {2}hint: --web-image IMAGE: /);
  });
});

describe('--json', () => {
  it('every command that reports has it, and a usage error is one object of one shape: ok false, the error with its exit code', async () => {
    for (const entry of COMMANDS) {
      const cmd = await loadCommand(entry);
      if (entry.name === 'lab ssh') continue; // it hands the terminal to ssh: nothing to report
      expect(Object.keys(cmd.options), entry.name).toContain('json');
      const r = await hw(...entry.name.split(' '), '--json', '--no-such-option');
      expect(r.code, entry.name).toBe(2);
      const lines = r.stdout.trim().split('\n');
      expect(lines, entry.name).toHaveLength(1);
      expect(JSON.parse(lines[0]!), entry.name).toMatchObject({
        ok: false, ...cmd.jsonFields,
        error: { code: 2, message: `unknown option --no-such-option for "hardway ${entry.name}"`, file: null, line: null, hint: expect.any(String) },
      });
    }
  });
});

describe('wrapping', () => {
  it('breaks at spaces with a hanging indent, and keeps a word longer than a line whole', () => {
    expect(wrap('aa bb cc dd', 5, '', '  ')).toEqual(['aa bb', '  cc', '  dd']);
    expect(wrap('x https://example.com/a/very/long/url y', 10)).toEqual(['x', 'https://example.com/a/very/long/url', 'y']);
  });

  it('joins the lines of a paragraph, keeps blank lines between paragraphs and list items on their own lines', () => {
    expect(wrapBlock('one\ntwo\n\n- three four\n- five', 80)).toEqual(['one two', '', '- three four', '- five']);
    expect(wrapBlock('- a b c d', 6)).toEqual(['- a b', '  c d']);
  });
});

describe('did you mean', () => {
  it.each([
    [['instal'], 'unknown command "instal"', 'did you mean "hardway up"?'],
    [['bootstrap-worker'], 'unknown command "bootstrap-worker"', 'did you mean "hardway bootstrap-workers"?'],
    [['cert', 'check'], 'unknown command "cert check"', 'did you mean "hardway certs check"'],
    [['certs', 'chek'], 'unknown command "certs chek"', 'did you mean "hardway certs check"?'],
    [['lab', 'stats'], 'unknown command "lab stats"', 'did you mean "hardway lab status"?'],
    [['etcd', 'snapshot', 'sav'], 'unknown command "etcd snapshot sav"', 'did you mean "hardway etcd snapshot save"?'],
    [['up', '--dryrun'], 'unknown option --dryrun for "hardway up"', 'did you mean --dry-run?'],
    [['up', '--nodes', 'x'], 'unknown option --nodes for "hardway up"', 'did you mean --node?'],
    [['doctor', '--verbos'], 'unknown option --verbos for "hardway doctor"', 'did you mean --verbose?'],
    [['reset', '--delete-data', 'etc'], '--delete-data does not know "etc"', 'did you mean "etcd"?'],
    [['up', '--ignore-preflight', 'clock', '--ignore-preflight', 'etcd-dsk'], '--ignore-preflight does not know "etcd-dsk"', 'did you mean "etcd-disk"?'],
    // Issue 36 point 5: a machine typed as an argument, a value with a dash, an option without a command.
    [['up', 'node-0'], '"hardway up" takes no arguments, got "node-0"', 'did you mean --node node-0?'],
    [['verify', '--ready-timeout', '-5'], '--ready-timeout must be a whole number from 0 to 3600, got "-5"', '"hardway verify --help" lists its options'],
    [['smoke', '--web-image', '-x'], '--web-image needs a value, and "-x" looks like an option', 'if "-x" is the value, write --web-image=-x;'],
    [['--dry-rn'], '"--dry-rn" is an option; options follow a command', 'did you mean --dry-run? e.g. "hardway certs --dry-run";'],
  ])('hardway %j: exit 2, the error, then the suggestion', async (args, message, hint) => {
    const r = await hw(...args);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    const [first, second] = r.stderr.split('\n');
    expect(first).toBe(`error: ${message}`);
    expect(second).toContain(`hint: ${hint}`);
  });

  it('nothing close: no suggestion, just where the list is', async () => {
    const r = await hw('frobnicate');
    expect(r.stderr).toBe('error: unknown command "frobnicate"\n  hint: "hardway --help" lists every command\n');
  });

  it('a word after a command with subcommands is its argument unless it is close to a subcommand', () => {
    const table = { commands: COMMANDS, aliases: COMMAND_ALIASES };
    expect(resolveArgs(['certs', '--renew', 'admin'], table)).toMatchObject({ kind: 'command', rest: ['--renew', 'admin'] });
    expect(resolveArgs(['certs', 'check'], table)).toMatchObject({ kind: 'command', entry: { name: 'certs check' } });
  });

  it('--help after "--" belongs to the command run on the machine (lab ssh node-0 -- ls -h)', () => {
    const table = { commands: COMMANDS, aliases: COMMAND_ALIASES };
    expect(resolveArgs(['lab', 'ssh', 'node-0', '--', 'ls', '-h'], table)).toMatchObject({ kind: 'command', help: false, rest: ['node-0', '--', 'ls', '-h'] });
    expect(resolveArgs(['lab', 'ssh', '-h'], table)).toMatchObject({ kind: 'command', help: true });
  });
});

describe('commandHelp', () => {
  it('lists -h and the examples, each under its comment', async () => {
    const cmd = await loadCommand(COMMANDS.find((c) => c.name === 'up')!);
    const text = commandHelp(cmd, 80);
    expect(text).toMatch(/^ {2}-h, --help +show this help$/m);
    expect(text).toMatch(/Examples:\n {2}# show what would change in pki\/ and on each machine, changing nothing\n {2}hardway up --dry-run\n/);
  });
});
