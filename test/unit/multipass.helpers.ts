// A Multipass in memory for the unit tests of `hardway multipass`: it answers list/info/launch/
// start/delete like the real command (its JSON printed by the test stand-in's formatter, which
// test/unit/multipass-json.test.ts holds to Multipass's own goldens), and a probe that plays
// cloud-init: a VM answers SSH with the host key and marker of the user-data it was launched with.
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { parse } from 'yaml';
import { MultipassClient, type MultipassRunner } from '../../src/multipass/client.ts';
import type { Probe } from '../../src/multipass/probe.ts';
import { parseMarker } from '../../src/multipass/user-data.ts';
import type { MultipassDeps } from '../../src/multipass/up.ts';
import { infoJson, listJson, type InstanceView } from '../fixtures/multipass/stand-in/format.ts';

const VALUED = new Set(['--format', '--name', '--cpus', '--memory', '--disk', '--timeout', '--cloud-init']);

/** One instance of the fake. */
export interface FakeInstance {
  state: string;
  ipv4: string[];
  /** The user-data it was launched with ('' for one launched by someone else). */
  userData: string;
  /** Its host key if not the user-data's (a VM launched by hand). */
  hostKey?: string;
}

/** The fake Multipass and the calls made to it. */
export class FakeMultipass {
  instances = new Map<string, FakeInstance>();
  calls: string[][] = [];
  /** Launches of these names fail with this stderr. */
  failLaunch = new Map<string, string>();
  /** These names never get an address. */
  noAddress = new Set<string>();
  private next = 10;

  readonly run: MultipassRunner = async (args, input) => {
    this.calls.push(args);
    const [cmd, ...rest] = args;
    const names = rest.filter((a, i) => !a.startsWith('-') && !VALUED.has(rest[i - 1] ?? ''));
    const fail = (msg: string) => ({ code: 2, stdout: '', stderr: `${cmd} failed: ${msg}\n` });
    switch (cmd) {
      case 'list':
        return { code: 0, stdout: listJson([...this.instances].map(([n, i]) => this.view(n, i))), stderr: '' };
      case 'info': {
        const missing = names.filter((n) => !this.instances.has(n));
        if (missing.length) return fail(`The following errors occurred:\n${missing.map((n) => `instance "${n}" does not exist`).join('\n')}`);
        return { code: 0, stdout: infoJson(names.map((n) => this.view(n, this.instances.get(n)!))), stderr: '' };
      }
      case 'launch': {
        const name = rest[rest.indexOf('--name') + 1]!;
        if (this.instances.has(name)) return fail(`instance "${name}" already exists`);
        if (this.failLaunch.has(name)) return { code: 2, stdout: '', stderr: this.failLaunch.get(name)! };
        this.instances.set(name, { state: 'Running', ipv4: this.noAddress.has(name) ? [] : [`192.168.64.${this.next++}`], userData: input ?? '' });
        return { code: 0, stdout: `Launched: ${name}\n`, stderr: '' };
      }
      case 'start':
        for (const n of names) this.instances.get(n)!.state = 'Running';
        return { code: 0, stdout: '', stderr: '' };
      case 'delete':
        for (const n of names) this.instances.delete(n);
        return { code: 0, stdout: '', stderr: '' };
      default:
        return fail(`unknown command ${cmd}`);
    }
  };

  /** An instance launched by someone else (no hardway user-data). */
  addForeign(name: string, state = 'Running'): void {
    this.instances.set(name, { state, ipv4: state === 'Running' ? [`192.168.64.${this.next++}`] : [], userData: '', hostKey: 'ssh-ed25519 AAAAforeign' });
  }

  /** The calls of one subcommand. */
  callsOf(cmd: string): string[][] {
    return this.calls.filter((c) => c[0] === cmd);
  }

  private view(name: string, i: FakeInstance): InstanceView {
    const running = i.state === 'Running';
    return {
      name, state: i.state, imageHash: 'ab'.repeat(32), imageRelease: '24.04 LTS', snapshotCount: 0,
      ipv4: running ? (i.ipv4.length ? i.ipv4 : ['N/A']) : [],
      ...(running ? { runtime: { release: 'Ubuntu 24.04.1 LTS', cpuCount: '2', load: [0.1, 0.2, 0.3] } } : {}),
    };
  }

  /** SSH as cloud-init would have set the VM up: the user-data's host key and marker, checked against DIR/known_hosts. */
  readonly probe: Probe = async (dir, hostname, ip) => {
    const entry = [...this.instances].find(([, i]) => i.state === 'Running' && i.ipv4.includes(ip));
    if (!entry) return { status: 'unreachable', detail: `ssh: connect to host ${ip} port 22: No route to host` };
    const [, inst] = entry;
    const config = (inst.userData ? parse(inst.userData) : {}) as { ssh_keys?: { ed25519_public?: string }; write_files?: Array<{ content: string }> };
    const presented = inst.hostKey ?? config.ssh_keys?.ed25519_public ?? '';
    const known = existsSync(join(dir, 'known_hosts')) ? readFileSync(join(dir, 'known_hosts'), 'utf8') : '';
    const pinned = known.split('\n').find((l) => l.split(' ')[0]!.split(',').includes(hostname));
    if (!pinned || pinned.split(' ').slice(1, 3).join(' ') !== presented.split(' ').slice(0, 2).join(' ')) {
      return { status: 'host-key', detail: 'Host key verification failed.' };
    }
    const marker = config.write_files?.[0]?.content;
    return marker ? { status: 'ok', marker: parseMarker(marker) } : { status: 'no-marker', detail: 'cat: /etc/hardway/multipass-vm: No such file or directory' };
  };
}

/** A clock whose sleep only moves time on. */
export function fakeClock(start = Date.parse('2025-01-01T00:00:00Z')) {
  let t = start;
  return { now: () => t, sleep: async (ms: number) => void (t += ms) };
}

/** Deps for the commands over a fake, with a fresh state directory; progress lines are collected. */
export function fakeDeps(fake: FakeMultipass): MultipassDeps & { output: () => string } {
  let out = '';
  const stream = new Writable({ write(chunk, _e, done) { out += String(chunk); done(); } });
  return {
    client: new MultipassClient(fake.run),
    stateDir: mkdtempSync(join(tmpdir(), 'hardway-mp-state-')),
    probe: fake.probe,
    clock: fakeClock(),
    progress: { stream, env: { CI: 'true' } },
    output: () => out,
  };
}
