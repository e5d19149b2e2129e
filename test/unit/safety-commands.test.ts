// Issue 24, items 4, 5, 13, 14 and the command checks of 16: remove-node never resets a machine
// that took a removed worker's address; etcd snapshot restore needs --yes; every --json command
// prints one object on an input error; -i is checked before any connection; doctor does not blame
// the machine for a key nobody offered; narrow terminals, odd NAMEs and huge --pull-image values.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, type Writable } from 'node:stream';
import { parseArgs } from 'node:util';
import { describe, expect, it } from 'vitest';
import { remoteEntry } from '../../src/commands/index.ts';
import { removalOf } from '../../src/removal.ts';
import { remoteCommand } from '../../src/commands/remote.ts';
import { sshFindings } from '../../src/doctor/checks/machine.ts';
import { gatherMachine } from '../../src/doctor/gather.ts';
import { hostConnector, ONE_ATTEMPT } from '../../src/transport/index.ts';
import type { DoctorContext } from '../../src/doctor/types.ts';
import { loadInventory } from '../../src/inventory.ts';
import { DEBIAN_OS_RELEASE } from '../fixtures/fake-transport.ts';
import { runCli } from '../helpers/cli.ts';
import { EXAMPLE_MACHINES, hardway } from './certs.helpers.ts';
import { capture, fakeCluster, fakeFactory, inventoryOf, projectDir } from './engine.helpers.ts';
import { failedCleanly, loopbackProject } from './safety.helpers.ts';

/** Fake Debian machines that pin-hosts can run on. */
const debianHosts = () => fakeCluster(inventoryOf(), (h) => ({ hostname: h, tools: [], files: { '/etc/hosts': '127.0.0.1 localhost\n', '/etc/hostname': `${h}\n`, '/etc/os-release': DEBIAN_OS_RELEASE } }));

/**
 * Runs `hardway pin-hosts ARGS` on fake machines with the given stdout and stderr, while the
 * process's own stdout has the properties given (listr2 reads its width and TTY-ness there) and
 * keeps what is written to it; restored after.
 */
async function pinHostsWith(args: string[], io: { stdout: Writable; stderr: Writable }, stdoutProps: Record<string, unknown>): Promise<{ code: number; written: string }> {
  const cmd = remoteCommand(remoteEntry('pin-hosts'), { connectors: () => async () => fakeFactory(debianHosts()) });
  const written: string[] = [];
  const props = { ...stdoutProps, write: (chunk: unknown) => written.push(String(chunk)) > 0 };
  const saved = Object.keys(props).map((k) => [k, Object.getOwnPropertyDescriptor(process.stdout, k)] as const);
  for (const [k, value] of Object.entries(props)) Object.defineProperty(process.stdout, k, { value, configurable: true, writable: true });
  try {
    const parsed = parseArgs({ args, options: cmd.options, strict: true });
    const code = await cmd.run({ values: parsed.values as never, positionals: [], ...io, cwd: projectDir(), env: { TERM: 'xterm' } });
    return { code, written: written.join('') };
  } finally {
    for (const [k, d] of saved) {
      if (d) Object.defineProperty(process.stdout, k, d);
      else delete (process.stdout as unknown as Record<string, unknown>)[k];
    }
  }
}

const BAD_LINE_2 = '10.240.0.10 server.kubernetes.local server\n10.240.0.999 node-0.kubernetes.local node-0 10.200.0.0/24\n';

describe('remove-node never resets a machine that took the removed worker\'s address (item 4)', () => {
  /** A project where node-1 was issued its certificate, then left machines.txt; `now` is what machines.txt says after. */
  async function afterwards(now: string, cluster = '') {
    const p = loopbackProject({ cluster: `keyAlgorithm: ecdsa-p256\n${cluster}` });
    expect((await hardway(p, 'certs')).code).toBe(0);
    writeFileSync(p.machines, now);
    return p;
  }

  it('a worker holds the address now: exit 2 naming it, nothing asked of any machine', async () => {
    const p = await afterwards('10.240.0.10 server.kubernetes.local server\n10.240.0.20 node-0.kubernetes.local node-0 10.200.0.0/24\n10.240.0.21 node-2.kubernetes.local node-2 10.200.2.0/24\n');
    for (const mode of ['--dry-run', '--yes']) {
      const run = await hardway(p, 'remove-node', 'node-1', mode);
      failedCleanly(run, 2, `node-1 is gone from machines.txt, and its address 10.240.0.21 (from pki/machines/node-1/kubelet.crt) now belongs to node-2 (${p.machines}:3, worker); nothing was changed`);
      expect(run.stderr).toContain('remove-node would reset the machine at 10.240.0.21, which is node-2 now');
    }
    expect(readdirSync(p.dir)).not.toContain('logs');
  });

  it('a control plane holds the address now: refused the same way', async () => {
    const p = await afterwards('10.240.0.10 server.kubernetes.local server\n10.240.0.21 server-2.kubernetes.local server-2\n10.240.0.20 node-0.kubernetes.local node-0 10.200.0.0/24\n', 'evenControlPlanes: true\n');
    expect(() => removalOf(loadInventory(p.machines), 'node-1')).toThrow(expect.objectContaining({
      exitCode: 2, message: expect.stringContaining('now belongs to server-2 (') && expect.stringContaining('control-plane); nothing was changed'),
    }));
  });

  it('a NAME that is not a hostname names no path it never looked at (item 16)', async () => {
    const p = await afterwards(EXAMPLE_MACHINES);
    const run = await hardway(p, 'remove-node', '../..', '--dry-run');
    failedCleanly(run, 2, '"../.." is not a hostname, and no worker of machines.txt');
    expect(run.stderr).not.toContain('kubelet.crt does not exist');
  });
});

describe('etcd snapshot restore needs --yes (item 5)', () => {
  /** A project with a stand-in etcdctl that calls any file a snapshot, and a file that passes the integrity check. */
  function withSnapshot() {
    const p = loopbackProject({ machines: '10.240.0.10 server.kubernetes.local server\n' });
    mkdirSync(join(p.dir, 'downloads/client'), { recursive: true });
    writeFileSync(join(p.dir, 'downloads/client/etcdctl'), '#!/bin/sh\necho \'{"hash":1,"revision":2,"totalKey":3,"totalSize":16416}\'\n');
    chmodSync(join(p.dir, 'downloads/client/etcdctl'), 0o755);
    const db = Buffer.alloc(16384);
    db.writeUInt32LE(0xed0cdaed, 16);
    db.writeUInt32LE(2, 20);
    writeFileSync(join(p.dir, 's.db'), Buffer.concat([db, createHash('sha256').update(db).digest()]));
    return p;
  }

  it('without --yes: the file is checked, then exit 2 saying what it would do; no machine is asked, no log opened', async () => {
    const p = withSnapshot();
    const run = await hardway(p, 'etcd', 'snapshot', 'restore', 's.db');
    failedCleanly(run, 2, '"hardway etcd snapshot restore" stops the control plane and etcd on server and replaces the cluster\'s whole state with the snapshot\'s; it runs only with --yes');
    expect(run.stderr).toContain(`hint: run it again with --yes to do it: hardway etcd snapshot restore s.db --machines ${p.machines} --yes\n`);
    expect(run.stderr).toContain(`or with --dry-run to see what it would do: hardway etcd snapshot restore s.db --machines ${p.machines} --dry-run\n`);
    expect(run.stdout).toContain('s.db: an etcd snapshot: revision 2');
    expect(readdirSync(p.dir)).not.toContain('logs');
  });

  it('--dry-run shows the plan without --yes, and --help lists --yes', async () => {
    const p = withSnapshot();
    const dry = await hardway(p, 'etcd', 'snapshot', 'restore', 's.db', '--dry-run');
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toContain('Would restore it on 1 control-plane machine(s): server. Nothing was changed.');
    expect((await runCli(['etcd', 'snapshot', 'restore', '--help'], p.dir)).stdout).toMatch(/--yes\s+yes, do it/);
  });
});

describe('--json on an input error prints one object (item 13)', () => {
  it.each(['certs check', 'inventory', 'doctor', 'pin-hosts'])('hardway %s --json: ok false and the error with file and line', async (cmd) => {
    const dir = mkdtempSync(join(tmpdir(), 'hw-json-'));
    const file = join(dir, 'machines.txt');
    writeFileSync(file, BAD_LINE_2);
    const run = await runCli([...cmd.split(' '), '--json'], dir);
    expect(run.code).toBe(2);
    const lines = run.stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({
      ok: false,
      error: { code: 2, message: '"10.240.0.999" is not a valid IPv4 address', file, line: 2, hint: expect.stringContaining('four numbers') },
    });
    expect(run.stderr.startsWith(`error: ${file}:2: `)).toBe(true);
  });
});

describe('--json in a terminal: the progress never reaches stdout (item 13)', () => {
  it('with stderr a terminal, stdout carries the one JSON object and nothing else', async () => {
    const out = capture();
    const err = capture();
    Object.assign(err.stream, { isTTY: true, columns: 100 });
    const { code, written } = await pinHostsWith(['--json'], { stdout: out.stream, stderr: err.stream }, {});
    expect(code).toBe(0);
    expect(written).toBe('');
    expect(JSON.parse(out.text())).toMatchObject({ ok: true, changed: 3 });
    expect(err.text()).toContain('pin-hosts');
  });
});

describe('the identity file (-i) is checked before any connection (item 14)', () => {
  const keys = mkdtempSync(join(tmpdir(), 'hw-keys-'));
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'test', '-f', join(keys, 'id')]);
  mkdirSync(join(keys, 'a-directory'));

  it.each([
    ['missing', join(keys, 'nope'), `identity file ${join(keys, 'nope')} (-i) not found`],
    ['a directory', join(keys, 'a-directory'), `identity file ${join(keys, 'a-directory')} (-i) is a directory, not a file`],
    ['the public key', join(keys, 'id.pub'), `identity file ${join(keys, 'id.pub')} (-i) is a public key, not a private one`],
  ])('%s: exit 2 at once for a remote command, doctor and etcd snapshot restore', async (_what, file, message) => {
    const p = loopbackProject();
    for (const cmd of [['pin-hosts'], ['doctor'], ['etcd', 'snapshot', 'restore', 's.db']]) {
      const started = Date.now();
      const run = await hardway(p, ...cmd, '-i', file);
      failedCleanly(run, 2, message);
      expect(run.stderr).toContain('give the private key');
      expect(Date.now() - started).toBeLessThan(2000);
    }
    expect(readdirSync(p.dir)).not.toContain('logs');
  });

  it.each([
    ['missing', 'nope', (f: string) => `identity file ${f} (ssh.identityFile) not found`],
    ['a directory', 'a-directory', (f: string) => `identity file ${f} (ssh.identityFile) is a directory, not a file`],
    ['the public key', 'id.pub', (f: string) => `identity file ${f} (ssh.identityFile) is a public key, not a private one`],
  ])('ssh.identityFile in cluster.yaml, %s: the same check as -i, exit 2 naming cluster.yaml and its line', async (_what, name, message) => {
    const file = join(keys, name);
    const p = loopbackProject();
    const withKey = (key: string) => `keyAlgorithm: ecdsa-p256\nssh:\n  identityFile: ${key}\n  configFile: ssh_config\n`;
    writeFileSync(join(p.dir, 'cluster.yaml'), withKey(file));
    for (const cmd of [['inventory'], ['pin-hosts'], ['doctor']]) {
      const run = await hardway(p, ...cmd);
      failedCleanly(run, 2, `cluster.yaml:3: ${message(file)}`);
      expect(run.stderr).toContain('give the private key');
    }
    expect(readdirSync(p.dir)).not.toContain('logs');
    // The private key itself passes.
    writeFileSync(join(p.dir, 'cluster.yaml'), withKey(join(keys, 'id')));
    expect((await hardway(p, 'inventory')).code).toBe(0);
  });

  it('doctor says no key was offered, not that the machine refuses one', async () => {
    const p = loopbackProject();
    const inv = loadInventory(p.machines);
    const home = mkdtempSync(join(tmpdir(), 'hw-home-'));
    const node0 = inv.machines[1]!;
    const ev = await gatherMachine(node0, [], hostConnector(inv, { dir: inv.dir, home, env: {}, ...ONE_ATTEMPT }));
    const [finding] = sshFindings({ inventory: inv } as DoctorContext, node0, ev);
    expect(finding!.cause).toMatch(/^hardway had no SSH key to offer node-0 \(no -i, no ssh\.identityFile, no ~\/\.ssh\/id_\* and no ssh-agent\)/);
    expect(finding!.cause).not.toContain('refuses');
  });
});

describe('smaller checks of commands (item 16)', () => {
  it('a terminal that reports 0 columns gets whole lines, not one character per line', async () => {
    const out = capture();
    Object.assign(out.stream, { isTTY: true, columns: 0 });
    const { code, written } = await pinHostsWith([], { stdout: out.stream, stderr: new PassThrough() }, { columns: 0, isTTY: true });
    expect(code).toBe(0);
    // eslint-disable-next-line no-control-regex
    const lines = (written + out.text()).replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '').split('\n').filter((l) => l.trim() !== '');
    expect(lines.filter((l) => l.trim().length === 1)).toEqual([]);
    expect(out.text()).toMatch(/pin-hosts/);
  });

  it('doctor --pull-image of 5,000 characters is refused with the value cut, not echoed whole', async () => {
    const p = loopbackProject();
    const run = await hardway(p, 'doctor', '--pull-image', `registry.example/${'a'.repeat(5000)}`);
    failedCleanly(run, 2, /^error: --pull-image "registry\.example\/a+\.\.\." \(5017 characters\) is not an image reference$/);
    expect(run.stdout.length + run.stderr.length).toBeLessThan(500);
  });
});
