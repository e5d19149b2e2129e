// The review's list for first contact: each typo it names gets a "did you mean" (exit 2), help is
// reached three ways for a subcommand, and the modules below the CLI do not import from src/cli/.
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';

const cwd = mkdtempSync(join(tmpdir(), 'hw-routing-'));
const hw = (...args: string[]) => runCli(args, cwd);
const SRC = join(import.meta.dirname, '../../src');

describe('did you mean, for each typo of the review', () => {
  it.each([
    [['instal'], '"hardway up"'],
    [['bootstrap-worker'], '"hardway bootstrap-workers"'],
    [['cert', 'check'], '"hardway certs check"'],
    [['up', '--dryrun'], '--dry-run'],
    [['up', '--nodes', 'node-0'], '--node'],
    [['certs', 'chek'], '"hardway certs check"'],
    [['lab', 'stauts'], '"hardway lab status"'],
    [['etcd', 'snapshot', 'sav'], '"hardway etcd snapshot save"'],
    [['lab', 'status', '--jsn'], '--json'],
    [['etcd', 'snapshot', 'save', '--dryrun'], undefined],
    [['certs', 'check', '--jsno'], '--json'],
  ])('hardway %j', async (args, near) => {
    const r = await hw(...args);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    if (near) expect(r.stderr).toContain(`did you mean ${near}`);
    else expect(r.stderr).toMatch(/^error: unknown option --dryrun for "hardway etcd snapshot save"\n/);
  });
});

describe('help routing', () => {
  it.each([['lab', 'up'], ['etcd', 'snapshot', 'save'], ['certs', 'check'], ['multipass', 'down']])('help %s, %s --help and -h print the same help', async (...words) => {
    const asked = await hw('help', ...words);
    expect(asked.code).toBe(0);
    expect(asked.stdout).toMatch(new RegExp(`^Usage: hardway ${words.join(' ')} `));
    expect((await hw(...words, '--help')).stdout).toBe(asked.stdout);
    expect((await hw(...words, '-h')).stdout).toBe(asked.stdout);
    expect((await hw(...words, '--json', '--help')).stdout).toBe(asked.stdout);
  });

  it('hardway lab, multipass, etcd and etcd snapshot list their subcommands', async () => {
    for (const [group, sub] of [['lab', 'lab status'], ['multipass', 'multipass down'], ['etcd', 'etcd snapshot save'], ['etcd snapshot', 'etcd snapshot restore']] as const) {
      const r = await hw(...group.split(' '));
      expect(r.stderr, group).toMatch(new RegExp(`\\nCommands:\\n(.*\\n)* {2}${sub} +\\S`));
    }
  });
});

describe('layers', () => {
  it('no module outside src/cli/, src/commands/ and src/cli.ts imports from src/cli/', () => {
    const offenders: string[] = [];
    for (const f of readdirSync(SRC, { recursive: true }) as string[]) {
      if (!f.endsWith('.ts') || f.startsWith('cli/') || f.startsWith('commands/') || f === 'cli.ts') continue;
      const text = readFileSync(join(SRC, f), 'utf8');
      if (/from '(\.\.\/)+cli\/|from '\.\/cli\//.test(text)) offenders.push(relative(SRC, join(SRC, f)));
    }
    expect(offenders).toEqual([]);
  });
});
