// Messages that say the real cause, as a new user meets them: no permission (run as root or as the
// owner, never "move pki/ away"), a checkout without node_modules (npm ci), lab commands without
// root (sudo and the command), `lab ssh NODE -- CMD` passing everything after --, the project
// named the same way everywhere (--dir), and doctor on chosen machines (--node).
import { unwrapErrors } from '../helpers/unwrap.ts';
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, cpSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { permissionHint } from '../../src/input-file.ts';
import { planLab } from '../../src/lab/plan.ts';
import { runCli } from '../helpers/cli.ts';
import { certifiedProject, hardway, makeProject } from './certs.helpers.ts';
import { failedCleanly, loopbackProject } from './safety.helpers.ts';

const ROOT = join(import.meta.dirname, '../..');
const NOBODY = Number(spawnSync('id', ['-u', 'nobody'], { encoding: 'utf8' }).stdout.trim());
const NOGROUP = Number(spawnSync('id', ['-g', 'nobody'], { encoding: 'utf8' }).stdout.trim());

/** Runs bin/hardway.mjs as a separate process (as user `nobody` when asked), through tsx so the sources under test run. */
function cli(args: string[], opts: { cwd: string; env?: NodeJS.ProcessEnv; nobody?: boolean; bin?: string }) {
  const r = spawnSync(process.execPath, [opts.bin ?? join(ROOT, 'bin/hardway.mjs'), ...args], {
    cwd: opts.cwd, encoding: 'utf8', env: { PATH: process.env.PATH, HOME: '/nonexistent', HARDWAY_NO_BUNDLE: '1', ...opts.env },
    ...(opts.nobody ? { uid: NOBODY, gid: NOGROUP } : {}),
  });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: unwrapErrors(r.stderr) };
}

/** A directory others may enter (mkdtemp makes 0700 ones). */
function openDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  chmodSync(dir, 0o755);
  return dir;
}

describe('permission denied says who may, never to move pki/ away', () => {
  it('as another user than the owner of pki/: run as root (its owner), exit 2, no stack trace', async () => {
    const p = await certifiedProject();
    chmodSync(p.dir, 0o755);
    for (const args of [['certs', 'check'], ['up', '--dry-run'], ['kubeconfigs']]) {
      const r = cli(args, { cwd: p.dir, nobody: true });
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toMatch(/^error: (pki\/machines|\.hardway\.lock): permission denied\n {2}hint: (pki|\S+) belongs to root: run hardway as root \(sudo\)\n$/);
      expect(r.stderr).not.toMatch(/move|out of the way/);
    }
  });

  it('names the owner of the path, or of the directory it would be made in; the owner shut out of its own file is told to chmod', () => {
    const dir = openDir('hw-perm-');
    const theirs = join(dir, 'theirs');
    writeFileSync(theirs, 'x');
    chownSync(theirs, NOBODY, NOGROUP);
    expect(permissionHint(theirs, 0)).toMatch(/theirs belongs to nobody: run hardway as nobody \(the owner\), or as root$/);
    expect(permissionHint(join(dir, 'missing', 'file'), NOBODY)).toMatch(/belongs to root: run hardway as root \(sudo\)$/);
    chmodSync(theirs, 0o000);
    expect(permissionHint(theirs, NOBODY)).toMatch(/theirs belongs to you \(nobody\) but its mode \(0000\) shuts you out: give yourself access \(chmod u\+rwX\)/);
  });
});

describe('a checkout without node_modules', () => {
  it('says to run npm ci, in one message, exit 1, no stack trace', () => {
    const copy = mkdtempSync(join(tmpdir(), 'hw-clone-'));
    for (const part of ['bin', 'src', 'package.json']) cpSync(join(ROOT, part), join(copy, part), { recursive: true });
    const r = cli(['--help'], { cwd: copy, bin: join(copy, 'bin/hardway.mjs'), env: { HARDWAY_NO_BUNDLE: '' } });
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`error: hardway's npm packages are not installed: "tsx" is missing from ${copy}/node_modules/\n` +
      `  hint: run "npm ci" in ${copy}/ (it installs exactly what package-lock.json names), then run hardway again\n`);
  });
});

describe('lab commands without root', () => {
  const state = openDir('hw-labstate-');
  const root = join(state, 'labs');
  mkdirSync(root, { mode: 0o700 });

  it.each([
    [['lab', 'status'], "hardway lab status needs root: the labs' state in", 'sudo hardway lab status'],
    [['lab', 'ssh', 'node-0', '--', 'ls', '-h'], "hardway lab ssh needs root: the labs' state in", 'sudo hardway lab ssh node-0 -- ls -h'],
    [['lab', 'down', '--name', 'demo', '--yes'], 'hardway lab down needs root: the lab mounts overlays', 'sudo hardway lab down --name demo --yes'],
    [['lab', 'up', '--name', 'x'], 'hardway lab up needs root: the lab mounts overlays', 'sudo hardway lab up --name x'],
  ])('hardway %j says it needs root and the command to run', (args, message, again) => {
    const r = cli(args, { cwd: state, nobody: true, env: { HARDWAY_LAB_STATE: root } });
    expect(r.code).toBe(2);
    const [first, second] = r.stderr.split('\n');
    expect(first).toContain(`error: ${message}`);
    expect(second).toBe(`  hint: run it as root: ${again}`);
  });
});

describe('hardway lab ssh NODE -- CMD', () => {
  it('passes everything after -- to ssh, options included (-h is not hardway\'s help)', async () => {
    const state = mkdtempSync(join(tmpdir(), 'hw-labssh-'));
    const dir = mkdtempSync(join(tmpdir(), 'hw-labssh-dir-'));
    const plan = planLab({ name: 'fc', servers: 1, workers: 1, subnet: '10.240.170.0/24', dir });
    mkdirSync(join(state, 'fc'), { recursive: true });
    writeFileSync(join(state, 'fc', 'state.json'), JSON.stringify({ version: 1, plan, createdAt: new Date().toISOString() }));
    // A stand-in ssh that prints its arguments: nothing is reached.
    const bin = mkdtempSync(join(tmpdir(), 'hw-fake-ssh-'));
    writeFileSync(join(bin, 'ssh'), '#!/bin/sh\nprintf "%s\\n" "$@"\n', { mode: 0o755 });
    const env = { ...process.env, PATH: `${bin}:${process.env.PATH}`, HARDWAY_LAB_STATE: state };
    for (const args of [['node-0', '--', 'ls', '-h', '--help'], ['--node', 'node-0', '--', 'ls', '-h', '--help']]) {
      const r = await runCli(['lab', 'ssh', ...args], dir, env);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toBe(`-F\n${join(dir, 'ssh_config')}\nnode-0\nls\n-h\n--help\n`);
    }
    const typo = await runCli(['lab', 'ssh', 'node-9'], dir, env);
    expect(typo.stderr).toContain('did you mean "node-0"?');
  });
});

describe('the project is named the same way everywhere: --dir DIR, or --machines FILE', () => {
  it('--dir DIR reads DIR/machines.txt; both at once is a usage error', async () => {
    const p = makeProject();
    const elsewhere = mkdtempSync(join(tmpdir(), 'hw-elsewhere-'));
    for (const args of [['inventory', '--dir', p.dir], ['certs', 'check', '--dir', p.dir], ['render', '--dir', p.dir, '--out', join(elsewhere, 'r')]]) {
      const r = await runCli(args, elsewhere);
      expect(r.stderr, args.join(' ')).not.toMatch(/machines\.txt.*not found|no such file/i);
      expect(r.stdout + r.stderr).toContain(args[0] === 'certs' ? 'certificate missing' : 'node-0');
    }
    const both = await runCli(['inventory', '--dir', p.dir, '--machines', p.machines], elsewhere);
    failedCleanly(both, 2, '--dir and --machines both name the project');
  });

  it('every command that reads a project takes --dir, and every command that reaches machines over SSH takes -i, -v and --accept-new-host-keys', async () => {
    const { COMMANDS, loadCommand } = await import('../../src/commands/index.ts');
    const projectless = new Set(['lab up', 'lab status', 'lab ssh', 'lab reboot', 'lab stop', 'lab start', 'lab down', 'multipass up', 'multipass status', 'multipass down', 'version']);
    const ssh = ['doctor', 'etcd snapshot restore', 'certs', 'remove-node', ...COMMANDS.filter((c) => 'steps' in c).map((c) => c.name)];
    for (const entry of COMMANDS) {
      const { options } = await loadCommand(entry);
      if (!projectless.has(entry.name)) expect(Object.keys(options), entry.name).toContain('dir');
      if (ssh.includes(entry.name)) expect(options, entry.name).toMatchObject({ identity: { short: 'i' }, verbose: { short: 'v' }, 'accept-new-host-keys': {} });
      // Every command that reports takes --json, but lab ssh, which hands the terminal to ssh.
      if (entry.name !== 'lab ssh') expect(Object.keys(options), entry.name).toContain('json');
      // A command that removes or replaces what cannot be made again needs --yes and offers --dry-run.
      if (['reset', 'remove-node', 'etcd snapshot restore', 'lab down', 'multipass down'].includes(entry.name)) {
        expect(Object.keys(options), entry.name).toEqual(expect.arrayContaining(['yes', 'dry-run']));
      }
    }
  });

  it('--node picks the machines of doctor, remove-node and the lab commands; their first argument still works', async () => {
    const p = loopbackProject();
    const r = await hardway(p, 'doctor', '--node', 'node-0', '--json');
    const { findings } = JSON.parse(r.stdout) as { findings: Array<{ machine: string; check: string }> };
    expect(findings.filter((f) => f.check !== 'api').map((f) => f.machine)).toEqual(['node-0']);
    // -v: each connection attempt on stderr, as it happens; without it, none.
    const verbose = await hardway(p, 'doctor', '--node', 'node-0', '-v');
    expect(verbose.stderr).toContain('node-0: connecting to root@127.0.0.9:9');
    expect(verbose.stderr).not.toContain('node-1:');
    expect(r.stderr).not.toContain('connecting to');
    const typo = await hardway(p, 'doctor', '--node', 'node-7');
    failedCleanly(typo, 2, 'no machine named "node-7" in machines.txt');
    const dry = await hardway(p, 'remove-node', '--node', 'node-1', '--dry-run');
    expect(dry.stderr).toContain('remove-node: node-1 (');
    const two = await hardway(p, 'remove-node', 'node-0', '--node', 'node-1', '--dry-run');
    failedCleanly(two, 2, 'remove-node takes exactly one worker');
  });
});

describe('lab status --json', () => {
  it('prints exactly one JSON object on one line: one lab, and every lab of several', async () => {
    const state = mkdtempSync(join(tmpdir(), 'hw-labstatus-'));
    for (const [name, subnet] of [['fa', '10.240.171.0/24'], ['fb', '10.240.172.0/24']] as const) {
      const plan = planLab({ name, servers: 1, workers: 1, subnet, dir: `/tmp/${name}-lab` });
      mkdirSync(join(state, name), { recursive: true });
      writeFileSync(join(state, name, 'state.json'), JSON.stringify({ version: 1, plan, createdAt: new Date().toISOString() }));
    }
    const env = { ...process.env, HARDWAY_LAB_STATE: state };
    for (const [args, labs] of [[['--name', 'fa'], ['fa']], [[], ['fa', 'fb']]] as const) {
      const r = await runCli(['lab', 'status', ...args, '--json'], state, env);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout.endsWith('\n')).toBe(true);
      expect(r.stdout.trimEnd().split('\n')).toHaveLength(1);
      const status = JSON.parse(r.stdout) as { ok: boolean; labs: Array<{ name: string; machines: Array<{ hostname: string; running: boolean }> }> };
      expect(status.ok).toBe(true);
      expect(status.labs.map((l) => l.name)).toEqual(labs);
      expect(status.labs[0]!.machines.map((m) => [m.hostname, m.running])).toEqual([['server', false], ['node-0', false]]);
    }
  });
});

describe('lab down and multipass down need --yes, and offer --dry-run', () => {
  it('lab down without --yes is refused, naming --dry-run; --dry-run says what would go', async () => {
    const state = mkdtempSync(join(tmpdir(), 'hw-labdown-'));
    const plan = planLab({ name: 'fc', servers: 1, workers: 1, subnet: '10.240.170.0/24', dir: '/tmp/fc-lab' });
    mkdirSync(join(state, 'fc'), { recursive: true });
    writeFileSync(join(state, 'fc', 'state.json'), JSON.stringify({ version: 1, plan, createdAt: new Date().toISOString() }));
    const env = { ...process.env, HARDWAY_LAB_STATE: state };
    const refused = await runCli(['lab', 'down', '--name', 'fc'], state, env);
    failedCleanly(refused, 2, '"hardway lab down" removes lab "fc": its machines and the cluster on them; it runs only with --yes');
    expect(refused.stderr).toContain('hint: run it again with --yes to do it: hardway lab down --name fc --yes\n        or with --dry-run to see what it would do: hardway lab down --name fc --dry-run\n');
    const dry = await runCli(['lab', 'down', '--name', 'fc', '--dry-run'], state, env);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toBe(`lab "fc": would stop 2 machine(s) (server, node-0), unmount their overlays, remove bridge hw-fc and ${join(state, 'fc')}; the files in /tmp/fc-lab and the cached root stay\n`);
    expect(JSON.parse(readFileSync(join(state, 'fc', 'state.json'), 'utf8')).plan.spec.name).toBe('fc');
  });
});

it('runs as root, which these tests need (they act as another user)', () => {
  expect(userInfo().uid).toBe(0);
});
