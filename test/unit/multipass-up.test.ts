// `hardway multipass up/status/down` against a Multipass in memory (multipass.helpers.ts): what it
// launches and with which user-data, what a rerun keeps, the errors it gives, and that down
// removes only the VMs hardway launched.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { FailureError, InputError } from '../../src/errors.ts';
import { describeDown, multipassDown } from '../../src/multipass/down.ts';
import { readRecord } from '../../src/multipass/record.ts';
import { formatStatus, multipassStatus, statusProblem } from '../../src/multipass/status.ts';
import type { MultipassSpec } from '../../src/multipass/types.ts';
import { multipassUp } from '../../src/multipass/up.ts';
import { runCli } from '../helpers/cli.ts';
import { FakeMultipass, fakeDeps } from './multipass.helpers.ts';

function setup(over: Partial<MultipassSpec> = {}) {
  const fake = new FakeMultipass();
  const deps = fakeDeps(fake);
  const dir = mkdtempSync(join(tmpdir(), 'hardway-mp-up-'));
  const spec: MultipassSpec = { prefix: 'hw', servers: 1, workers: 2, image: '24.04', cpus: 2, memory: '2G', disk: '20G', dir, timeoutS: 60, ...over };
  const read = (f: string) => readFileSync(join(dir, f), 'utf8');
  return { fake, deps, spec, dir, read };
}

describe('multipass up', () => {
  it('launches each VM with hardway\'s user-data on stdin and writes machines.txt, cluster.yaml, known_hosts, ssh_config', async () => {
    const { fake, deps, spec, read } = setup();
    const r = await multipassUp(spec, deps);
    expect(r.launched).toEqual(['hw-server', 'hw-node-0', 'hw-node-1']);
    expect(fake.callsOf('launch')[0]).toEqual(['launch', '24.04', '--name', 'hw-server', '--cpus', '2', '--memory', '2G', '--disk', '20G', '--timeout', '60', '--cloud-init', '-']);
    // The record exists before the first launch, and the launches run one at a time, in order.
    expect(fake.calls.map((c) => c[0])).toEqual(['list', 'launch', 'launch', 'launch', 'info']);
    expect(read('machines.txt')).toBe('# Multipass "hw" (hardway multipass up): IP FQDN HOSTNAME [POD_SUBNET]\n'
      + '192.168.64.10 server.kubernetes.local server\n192.168.64.11 node-0.kubernetes.local node-0 10.200.0.0/24\n'
      + '192.168.64.12 node-1.kubernetes.local node-1 10.200.1.0/24\n');
    expect(parse(read('cluster.yaml'))).toEqual({ ssh: { user: 'root', identityFile: 'id_ed25519', knownHosts: 'known_hosts' } });
    // known_hosts holds exactly the host keys the user-data gave each VM, and root's key is DIR's.
    const project = read('id_ed25519.pub').trim();
    for (const [i, v] of r.vms.entries()) {
      const ud = parse(fake.instances.get(v.vm)!.userData) as { ssh_keys: { ed25519_public: string }; ssh_authorized_keys: string[]; hostname: string };
      expect(ud.hostname).toBe(v.hostname);
      expect(ud.ssh_authorized_keys).toEqual([project]);
      expect(read('known_hosts').split('\n')[i]).toBe(`${v.ip},${v.hostname},${v.fqdn},${v.vm} ${ud.ssh_keys.ed25519_public.split(' ').slice(0, 2).join(' ')}`);
    }
    expect(read('ssh_config')).toContain('Host node-1 node-1.kubernetes.local hw-node-1 192.168.64.12');
    const record = readRecord(deps.stateDir, 'hw')!;
    expect(record.vms.map((v) => `${v.vm} ${v.ip}`)).toEqual(['hw-server 192.168.64.10', 'hw-node-0 192.168.64.11', 'hw-node-1 192.168.64.12']);
    expect(new Set(record.vms.map((v) => v.id)).size).toBe(3);
  });

  it('a rerun launches nothing and rewrites the same files; a VM deleted by hand is launched again, alone, with a new host key', async () => {
    const { fake, deps, spec, read } = setup();
    await multipassUp(spec, deps);
    const files = ['machines.txt', 'cluster.yaml', 'known_hosts', 'ssh_config', 'id_ed25519'].map(read);
    fake.calls = [];
    const again = await multipassUp(spec, deps);
    expect(again).toMatchObject({ launched: [], started: [], kept: ['hw-server', 'hw-node-0', 'hw-node-1'], changed: [] });
    expect(fake.callsOf('launch')).toEqual([]);
    expect(['machines.txt', 'cluster.yaml', 'known_hosts', 'ssh_config', 'id_ed25519'].map(read)).toEqual(files);

    const oldKey = read('known_hosts').split('\n')[2];
    fake.instances.delete('hw-node-1');
    const third = await multipassUp(spec, deps);
    expect(third.launched).toEqual(['hw-node-1']);
    expect(read('known_hosts').split('\n')[2]).not.toBe(oldKey);
    expect(read('known_hosts').split('\n').slice(0, 2)).toEqual(files[2]!.split('\n').slice(0, 2));
  });

  it('starts the stopped VMs it launched', async () => {
    const { fake, deps, spec } = setup();
    await multipassUp(spec, deps);
    fake.instances.get('hw-node-0')!.state = 'Stopped';
    const r = await multipassUp(spec, deps);
    expect(r.started).toEqual(['hw-node-0']);
    expect(fake.callsOf('start')).toEqual([['start', 'hw-node-0']]);
  });

  it('rewrites machines.txt when an address changed and says which', async () => {
    const { fake, deps, spec, read } = setup();
    await multipassUp(spec, deps);
    fake.instances.get('hw-node-1')!.ipv4 = ['192.168.64.77'];
    const r = await multipassUp(spec, deps);
    expect(r.changed).toEqual([{ vm: 'hw-node-1', hostname: 'node-1', was: '192.168.64.12', now: '192.168.64.77' }]);
    expect(read('machines.txt')).toContain('192.168.64.77 node-1.kubernetes.local node-1 10.200.1.0/24');
    expect(read('known_hosts')).toMatch(/^192\.168\.64\.77,node-1,/m);
  });

  it('refuses a VM with its name that hardway did not launch, before launching anything', async () => {
    const { fake, deps, spec } = setup();
    fake.addForeign('hw-node-0');
    const err = await multipassUp(spec, deps).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InputError);
    expect((err as InputError).message).toBe('Multipass already has hw-node-0, which hardway did not launch');
    expect((err as InputError).hint).toContain('multipass delete --purge hw-node-0');
    expect(fake.callsOf('launch')).toEqual([]);
  });

  it('a failed launch is a failure carrying multipass\'s stderr; the VMs launched before it stay recorded', async () => {
    const { fake, deps, spec } = setup();
    fake.failLaunch.set('hw-node-0', 'launch failed: Remote "" is unknown or unreachable.\n');
    const err = await multipassUp(spec, deps).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FailureError);
    expect((err as Error).message).toBe('hw-node-0: multipass launch failed (exit 2):\n  launch failed: Remote "" is unknown or unreachable.');
    expect((err as FailureError).hint).toContain('multipass delete --purge hw-node-0');
    expect(fake.callsOf('launch').map((c) => c[3])).toEqual(['hw-server', 'hw-node-0']);
    expect(readRecord(deps.stateDir, 'hw')!.vms.map((v) => v.vm)).toEqual(['hw-server', 'hw-node-0', 'hw-node-1']);
  });

  it('a VM without an IPv4 address after the timeout is named (info polled until then)', async () => {
    const { fake, deps, spec } = setup({ timeoutS: 10 });
    fake.noAddress.add('hw-node-1');
    const err = await multipassUp(spec, deps).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FailureError);
    expect((err as Error).message).toBe('no IPv4 address after 10 s: hw-node-1 (Running)');
    expect(fake.callsOf('info').length).toBeGreaterThan(3);
  });

  it('a VM that presents another host key fails the login check at once', async () => {
    const { fake, deps, spec } = setup();
    await multipassUp(spec, deps);
    fake.instances.get('hw-server')!.hostKey = 'ssh-ed25519 AAAAsomeoneelse';
    await expect(multipassUp(spec, deps)).rejects.toThrow('hw-server (192.168.64.10) presented a host key that is not the one hardway generated for it');
  });

  it('refuses another --dir or other counts for a prefix it already launched', async () => {
    const { deps, spec } = setup();
    await multipassUp(spec, deps);
    await expect(multipassUp({ ...spec, workers: 3 }, deps)).rejects.toThrow('Multipass "hw" has 1 server(s) and 2 worker(s)');
    await expect(multipassUp({ ...spec, dir: '/elsewhere' }, deps)).rejects.toThrow(`Multipass "hw" has its files in ${spec.dir}`);
  });

  it('without multipass on PATH: exit 2 and how to install it, nothing written (up and status alike)', async () => {
    for (const args of [['multipass', 'up', '--dir', 'out'], ['multipass', 'status']]) {
      const dir = mkdtempSync(join(tmpdir(), 'hardway-mp-cli-'));
      const r = await runCli(args, dir, { PATH: '/nonexistent', HARDWAY_MULTIPASS_STATE: join(dir, 'state') });
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr, args.join(' ')).toContain('error: multipass is not installed: there is no "multipass" command on PATH');
      expect(r.stderr).toContain('hint: install Multipass: "sudo snap install multipass"');
      expect(r.stderr).not.toContain('multipass up');
      expect(r.stdout).toBe('');
    }
  });
});

describe('multipass status', () => {
  it('shows each VM, its addresses and machines.txt\'s, SSH; exits 1 naming a changed address and offering up', async () => {
    const { fake, deps, spec, dir } = setup();
    await multipassUp(spec, deps);
    const s = await multipassStatus('hw', deps);
    expect(s.vms.map((v) => `${v.vm} ${v.state} ${v.ipv4.join(',')} ${v.machinesTxt} ${v.ssh}`)).toEqual([
      'hw-server Running 192.168.64.10 192.168.64.10 true', 'hw-node-0 Running 192.168.64.11 192.168.64.11 true',
      'hw-node-1 Running 192.168.64.12 192.168.64.12 true']);
    expect(statusProblem(s)).toBeUndefined();
    expect(formatStatus(s)).toContain(`Multipass "hw": files in ${dir}`);

    fake.instances.get('hw-node-0')!.ipv4 = ['192.168.64.50'];
    fake.instances.get('hw-node-1')!.state = 'Stopped';
    const changed = await multipassStatus('hw', deps);
    expect(changed.vms[2]).toMatchObject({ state: 'Stopped', ipv4: [] });
    expect(changed.vms[2]!.ssh).toBeUndefined();
    const problem = statusProblem(changed)!;
    expect(problem.message).toBe('address changed since machines.txt was written:\n  node-0 (hw-node-0): 192.168.64.11 in machines.txt, now 192.168.64.50');
    expect(problem.hint).toContain('run "hardway multipass up --name hw"');
    fake.instances.delete('hw-server');
    expect(statusProblem(await multipassStatus('hw', deps))!.message).toContain('gone from Multipass (or deleted): hw-server');
  });

  it('without a record: an input error that says how to launch', async () => {
    const { deps } = setup();
    await expect(multipassStatus('hw', deps)).rejects.toThrow(InputError);
  });
});

describe('multipass down', () => {
  it('deletes and purges exactly the recorded VMs, leaves a stranger with the same prefix and one that fails its check, and says so', async () => {
    const { fake, deps, spec } = setup();
    await multipassUp(spec, deps);
    fake.addForeign('hw-scratch');
    fake.addForeign('other-vm');
    fake.instances.get('hw-node-1')!.hostKey = 'ssh-ed25519 AAAAimpostor'; // same name, not the VM hardway launched
    const r = await multipassDown('hw', deps);
    expect(fake.callsOf('delete')).toEqual([['delete', '--purge', 'hw-server', 'hw-node-0']]);
    expect([...fake.instances.keys()].sort()).toEqual(['hw-node-1', 'hw-scratch', 'other-vm']);
    const { lines, error } = describeDown('hw', r);
    expect(lines).toEqual([
      'deleted and purged: hw-server, hw-node-0',
      'left alone: hw-scratch: hardway did not launch it (not in its record)',
      'left alone: hw-node-1: it presents another host key than the one hardway gave it',
    ]);
    expect(error!.message).toBe('1 recorded VM(s) not deleted: hw-node-1');
    expect(readRecord(deps.stateDir, 'hw')!.vms.map((v) => v.vm)).toEqual(['hw-node-1']);
  });

  it('stopped VMs go by the record alone; a second down has nothing to do; no record deletes nothing', async () => {
    const { fake, deps, spec } = setup();
    await multipassUp(spec, deps);
    fake.instances.get('hw-node-0')!.state = 'Stopped';
    fake.instances.delete('hw-node-1');
    const r = await multipassDown('hw', deps);
    expect(r).toMatchObject({ deleted: ['hw-server', 'hw-node-0'], gone: ['hw-node-1'], leftAlone: [] });
    expect(readRecord(deps.stateDir, 'hw')).toBeUndefined();
    fake.addForeign('hw-server');
    const none = await multipassDown('hw', deps);
    expect(describeDown('hw', none).lines).toEqual([
      'hardway has launched no Multipass VMs named "hw-...": nothing to delete',
      'left alone: hw-server: hardway did not launch it (not in its record)',
    ]);
    expect(fake.instances.has('hw-server')).toBe(true);
  });

  it('the CLI: status --json and down through a fake multipass on PATH', async () => {
    const { dir } = setup();
    // A one-line multipass that lists nothing: down without a record deletes nothing and exits 0.
    const bin = mkdtempSync(join(tmpdir(), 'hardway-mp-bin-'));
    writeFileSync(join(bin, 'multipass'), '#!/bin/sh\necho \'{"list": []}\'\n', { mode: 0o755 });
    const env = { PATH: `${bin}:/usr/bin:/bin`, HARDWAY_MULTIPASS_STATE: join(dir, 'state') };
    const down = await runCli(['multipass', 'down', '--name', 'hw', '--yes'], dir, env);
    expect(down).toMatchObject({ code: 0, stdout: 'hardway has launched no Multipass VMs named "hw-...": nothing to delete\n' });
    const status = await runCli(['multipass', 'status', '--json'], dir, env);
    expect(status.code).toBe(2);
    expect(status.stderr).toContain('hardway has launched no Multipass VMs named "hardway-..."');
  });
});
