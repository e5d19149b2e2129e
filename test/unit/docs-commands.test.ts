// The documents a user reads: README.md is a guide of at most 300 lines that starts with the two
// commands that matter on a fresh machine; every `hardway ...` line in it and in docs/ names a
// command hardway has and options that command has; docs/cluster-yaml.md names every key
// cluster.yaml knows; no issue numbers; every relative link leads to a file.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { clusterYamlKeys } from '../../src/cluster-settings.ts';
import { commandLinesOf, problemsOf } from '../helpers/command-lines.ts';

const ROOT = join(import.meta.dirname, '../..');
const DOCS = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];
const read = (f: string) => readFileSync(join(ROOT, f), 'utf8');

describe('README.md and docs/', () => {
  it('README.md: at most 300 lines, starting with npm run demo and npm test', () => {
    const lines = read('README.md').split('\n');
    expect(lines.length).toBeLessThanOrEqual(300);
    expect(lines.slice(0, 6).join('\n')).toMatch(/^# hardway\n\n```sh\nnpm run demo +# .+\nnpm test +# .+\n```$/);
  });

  it('README.md says how to run hardway: npm link, npx hardway in the checkout, npx --package=DIR elsewhere', () => {
    const readme = read('README.md');
    expect(readme).toMatch(/`npm link` in the checkout/);
    expect(readme).toMatch(/`npx hardway \.\.\.` in the checkout/);
    expect(readme).toMatch(/`npx --package=\/path\/to\/hardway hardway \.\.\.` from any other directory/);
    expect(commandLinesOf('`cd x && npx --package=.. hardway verify`', 'x.md').map((f) => f.words)).toEqual([['verify']]);
  });

  it("the checkout is not a project: the tutorial's machines.txt is examples/machines.txt, which the README names and which parses", async () => {
    const { loadInventory } = await import('../../src/inventory.ts');
    expect(existsSync(join(ROOT, 'machines.txt'))).toBe(false);
    expect(loadInventory(join(ROOT, 'examples/machines.txt')).machines.map((m) => m.hostname)).toEqual(['server', 'node-0', 'node-1']);
    expect(read('README.md')).toContain('[examples/machines.txt](examples/machines.txt)');
  });

  it("README.md says what --dry-run writes: the run's log in logs/, nothing on the machines or in pki/", () => {
    const dryRun = /- \*\*Dry run\*\*:[^]*?(?=\n- )/.exec(read('README.md'))?.[0].replace(/\s+/g, ' ');
    expect(dryRun).toContain("writes only the run's log in `logs/`");
    expect(dryRun).not.toContain('nothing is written anywhere');
  });

  it('every `hardway ...` command line names a real command and options it has', async () => {
    const problems: string[] = [];
    let checked = 0;
    for (const file of DOCS) {
      for (const line of commandLinesOf(read(file), file)) {
        checked++;
        for (const p of await problemsOf(line.words)) problems.push(`${line.where}: ${p}: ${line.text}`);
      }
    }
    expect(problems).toEqual([]);
    expect(checked).toBeGreaterThan(100);
  });

  it('the checker finds what is wrong: an unknown command, an option the command lacks, a short option it lacks', async () => {
    const found = commandLinesOf('Run `hardway instal`.\n\n```sh\ncd x && hardway up --dryrun -x # a comment --nope\n```\n', 'x.md');
    expect(found.map((f) => f.words)).toEqual([['instal'], ['up', '--dryrun', '-x']]);
    expect(await problemsOf(found[0]!.words)).toEqual(['unknown command "instal"']);
    expect(await problemsOf(found[1]!.words)).toEqual(['"hardway up" has no option --dryrun', '"hardway up" has no option -x']);
    expect(await problemsOf(['lab', 'ssh', 'node-0', '--', 'ls', '-h', '--whatever'])).toEqual([]);
  });

  it('the checker finds a wrong value or argument: --only a step the command lacks, --node without its value, a choice not taken, arguments too many or too few', async () => {
    expect(await problemsOf(['bootstrap-workers', '--only', 'kubelt', '--node', 'node-1'])).toEqual(['"hardway bootstrap-workers" has no step "kubelt" (--only)']);
    expect(await problemsOf(['bootstrap-workers', '--only', 'kubelet', '--node', 'node-1'])).toEqual([]);
    expect((await problemsOf(['up', '--node']))[0]).toMatch(/^"hardway up": Option '--node <value>' argument missing/);
    expect(await problemsOf(['reset', '--delete-data', 'etc', '--yes'])).toEqual(['"hardway reset": --delete-data does not know "etc"']);
    expect(await problemsOf(['up', 'node-0'])).toEqual(['"hardway up" takes no arguments (none), got 1: node-0']);
    expect(await problemsOf(['lab', 'stop', 'node-0', 'node-1'])).toEqual(['"hardway lab stop" takes 0 to 1 arguments ([MACHINE]), got 2: node-0 node-1']);
    expect(await problemsOf(['lab', 'ssh', 'node-0', 'hostname'])).toEqual([]);
    expect(await problemsOf(['etcd', 'snapshot', 'restore', '--dry-run'])).toEqual(['"hardway etcd snapshot restore" takes 1 argument(s) (FILE), got 0: (none)']);
    expect(await problemsOf(['lab', 'break', '--list'])).toEqual([]);
    expect(await problemsOf(['certs', '--renew', 'admin', 'node-0/kubelet'])).toEqual([]);
  });

  it('docs/cluster-yaml.md names every key of cluster.yaml', () => {
    const doc = read('docs/cluster-yaml.md');
    const missing = clusterYamlKeys().filter((k) => !doc.includes(`\`${k}\``));
    expect(missing).toEqual([]);
    expect(clusterYamlKeys()).toContain('ssh.jumpHost');
  });

  it('no issue numbers in documents for users', () => {
    for (const file of DOCS) expect(read(file), file).not.toMatch(/\bissues? #?\d+/i);
  });

  it('every relative link leads to a file of the repository', () => {
    for (const file of DOCS) {
      for (const m of read(file).matchAll(/\]\(([^)#\s]+)(#[^)]*)?\)/g)) {
        const target = m[1]!;
        if (/^[a-z]+:/.test(target)) continue;
        expect(existsSync(join(ROOT, dirname(file), target)), `${file}: ${target}`).toBe(true);
      }
    }
  });
});
