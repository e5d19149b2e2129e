// The preflight checks `up` runs before it changes anything: each judged as data (the answers of
// its probes in, what is wrong and what to do out, or nothing), one test per check; then the step
// on a fake machine: the `[preflight NAME] on MACHINE: ...` lines, --ignore-preflight NAME and all,
// preflight.ignore in cluster.yaml, and that its probes go out in the one batch of the plans asked
// beside it (no round trip more for a no-op up).
import { describe, expect, it } from 'vitest';
import { coalescedFacts } from '../../src/engine/coalesced-facts.ts';
import { createFacts } from '../../src/engine/facts.ts';
import { FailureError } from '../../src/errors.ts';
import type { Inventory, Machine } from '../../src/inventory.ts';
import { PREFLIGHT_NAMES } from '../../src/preflight-names.ts';
import { cgroupControllersCommand, parseListeners } from '../../src/probes/system.ts';
import { preflightChecks, preflightStep } from '../../src/steps/preflight.ts';
import { ETCD_FREE_KB, PREFLIGHT, type AskedAt } from '../../src/steps/preflight/checks.ts';
import { routesStep } from '../../src/steps/routes.ts';
import { FakeTransport } from '../fixtures/fake-transport.ts';
import { debianMachine } from '../fixtures/debian-machine.ts';
import { aptSources, brNetfilterState, cgroupControllers, clock, freeKilobytes, listeners, pathsPresent } from '../../src/probes/system.ts';
import { inventoryOf, stepOptions } from './engine.helpers.ts';

const inv = inventoryOf();
const server = inv.machines.find((m) => m.hostname === 'server')!;
const node = inv.machines.find((m) => m.hostname === 'node-0')!;
const NOW = 1_800_000_000_000;
const at: AskedAt = { before: NOW, after: NOW + 300 };
const named = (name: string) => PREFLIGHT.find((c) => c.name === name)!;
/** The check's verdict on answers already parsed, as `wrong; fix`, or undefined. */
const judge = (name: string, answers: Record<string, unknown>, machine: Machine = node, inventory: Inventory = inv) => {
  const p = named(name).judge(answers as never, { inventory, machine, at });
  return p && `${p.wrong}; ${p.fix}`;
};

describe('preflight checks, each judged from its answers', () => {
  it('has one check per name, in the order of the names', () => {
    expect(PREFLIGHT.map((c) => c.name)).toEqual(PREFLIGHT_NAMES);
  });

  it('systemd: /run/systemd/system must exist', () => {
    expect(judge('systemd', { run: new Set(['/run/systemd/system']) })).toBeUndefined();
    expect(judge('systemd', { run: new Set() })).toMatch(/^systemd does not run this machine \(no \/run\/systemd\/system\); hardway runs every component as a systemd unit/);
  });

  it('ports: free, or held by the component hardway runs there; another program is named', () => {
    const ss = 'LISTEN 0 4096 127.0.0.1:2379 0.0.0.0:* users:(("etcd",pid=7,fd=8))\nLISTEN 0 4096 *:6443 *:* users:(("nginx",pid=9,fd=6),("nginx",pid=10,fd=6))\nLISTEN 0 128 [::]:22 [::]:* users:(("sshd",pid=1,fd=3))\n';
    const listening = parseListeners(ss)!;
    expect([...listening]).toEqual([[2379, ['etcd']], [6443, ['nginx']], [22, ['sshd']]]);
    expect(judge('ports', { listening }, server)).toBe("port 6443 (kube-apiserver's) is held by nginx; stop that program or move it to another port (ss -ltnp shows it)");
    expect(judge('ports', { listening: parseListeners('LISTEN 0 4096 *:10250 *:* users:(("kubelet",pid=3,fd=9))\n') }, node)).toBeUndefined();
    expect(judge('ports', { listening: parseListeners('LISTEN 0 4096 *:10250 *:* users:(("kubelet-old",pid=3,fd=9))\n') }, node)).toMatch(/^port 10250 \(kubelet's\) is held by kubelet-old;/);
    // Free, and no ss to ask: nothing to say.
    expect(judge('ports', { listening: new Map() }, server)).toBeUndefined();
    expect(judge('ports', { listening: parseListeners('ss-missing\n') }, server)).toBeUndefined();
  });

  it('br-netfilter: present or loadable; neither is named with what to do', () => {
    expect(judge('br-netfilter', { state: 'present' })).toBeUndefined();
    expect(judge('br-netfilter', { state: 'loadable' })).toBeUndefined();
    expect(judge('br-netfilter', { state: '' })).toMatch(/^br_netfilter is neither loaded, built in, nor loadable .*; install the kernel's modules/);
    expect(named('br-netfilter').appliesTo(server)).toBe(false);
  });

  it('clock: within 5 s of the jumpbox (the time asked bounds it), else how far behind or ahead', () => {
    const date = (s: number) => ({ now: { code: 0, stdout: `${s}\n` } });
    expect(judge('clock', date(NOW / 1000))).toBeUndefined();
    expect(judge('clock', date(NOW / 1000 - 6))).toBeUndefined();
    expect(judge('clock', date(NOW / 1000 + 6))).toBeUndefined();
    expect(judge('clock', date(NOW / 1000 - 40))).toMatch(/^its clock is 39 s behind the jumpbox's; set the time right/);
    expect(judge('clock', date(NOW / 1000 + 3600))).toMatch(/^its clock is 3599 s ahead of the jumpbox's;/);
  });

  it("etcd-disk: 2 GiB free where etcd keeps its data, on control planes", () => {
    expect(named('etcd-disk').asks(inv, server).free.cmd.text).toBe('df -Pk /var/lib 2>/dev/null');
    expect(judge('etcd-disk', { free: ETCD_FREE_KB }, server)).toBeUndefined();
    expect(judge('etcd-disk', { free: 512 * 1024 }, server)).toMatch(/^512 MiB free on the file system of \/var\/lib, where etcd keeps its data \(2048 MiB wanted\); free some space/);
    expect(named('etcd-disk').appliesTo(node)).toBe(false);
  });

  it('cgroups: cpu, memory and pids there (v2 or v1), else which are missing', () => {
    expect(cgroupControllersCommand('/x').text).toContain('read -r c < /x/cgroup.controllers');
    expect(judge('cgroups', { cgroups: { version: 2, controllers: new Set(['cpuset', 'cpu', 'io', 'memory', 'pids']) } })).toBeUndefined();
    expect(judge('cgroups', { cgroups: { version: 1, controllers: new Set(['cpu', 'cpuacct', 'memory', 'pids']) } })).toBeUndefined();
    expect(judge('cgroups', { cgroups: { version: 2, controllers: new Set(['cpu', 'pids']) } })).toMatch(/^the cgroup controller\(s\) memory are missing \(cgroup v2\); the kubelet and containerd/);
  });

  it('packages: installed, or apt there with a source; else which are missing and why apt cannot', () => {
    const all = new Set(['socat', 'conntrack', 'ipset', 'kmod', 'iptables']);
    expect(judge('packages', { installed: all, apt: { apt: false, sources: 0 } })).toBeUndefined();
    expect(judge('packages', { installed: new Set(['kmod']), apt: { apt: true, sources: 2 } })).toBeUndefined();
    expect(judge('packages', { installed: new Set(['kmod', 'iptables']), apt: { apt: true, sources: 0 } })).toBe('socat, conntrack, ipset are not installed and apt has no source to install from; add an apt source (/etc/apt/sources.list) the machine can reach, or install socat conntrack ipset yourself: worker-os installs them with apt-get');
  });
});

/** A machine on which every check passes (what the lab's machines answer), or with `bad` answers. */
function machine(name: string, bad: { clockOffS?: number; ss?: string } = {}) {
  const t = debianMachine(name);
  const ok = (stdout: string) => ({ code: 0, stdout, stderr: '' });
  t.answer(pathsPresent, (paths) => ok(paths.filter((p) => p === '/run/systemd/system').map((p) => `${p}\n`).join('')))
    .answer(listeners, () => ok(bad.ss ?? 'LISTEN 0 128 0.0.0.0:22 0.0.0.0:* users:(("sshd",pid=1,fd=3))\n'))
    .answer(brNetfilterState, () => ok('loadable\n'))
    .answer(clock, () => ok(`${Math.floor(Date.now() / 1000) + (bad.clockOffS ?? 0)}\n`))
    .answer(freeKilobytes, () => ok('Filesystem 1024-blocks Used Available Capacity Mounted on\n/dev/vda 263174212 28000000 78000000 27% /\n'))
    .answer(cgroupControllers, () => ok('v2 cpuset cpu io memory pids\n'))
    .answer(aptSources, () => ok('apt\n1\n'));
  return t;
}

const checkOn = async (m: Machine, t: FakeTransport, values: Record<string, string[]> = {}, inventory = inv) =>
  preflightStep.check({ host: m.hostname, machine: m, inventory, facts: createFacts(t), options: stepOptions({ values }), log: { info: () => undefined, debug: () => undefined } });

describe('the preflight step', () => {
  it('passes on a machine that has what hardway needs, asking one facts batch', async () => {
    const t = machine('node-0');
    await checkOn(node, t);
    expect(t.factBatches).toBe(1);
    expect(t.changesRun).toEqual([]);
  });

  it('fails with a line per failed check: [preflight NAME] on MACHINE: what is wrong; what to do', async () => {
    const t = machine('server', { clockOffS: -120, ss: 'LISTEN 0 4096 *:2380 *:* users:(("haproxy",pid=9,fd=6))\n' });
    const e = await checkOn(server, t).catch((x: unknown) => x as FailureError);
    expect(e).toBeInstanceOf(FailureError);
    const lines = (e as FailureError).message.split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toBe("[preflight ports] on server: port 2380 (etcd's) is held by haproxy; stop that program or move it to another port (ss -ltnp shows it)");
    expect(lines[1]).toMatch(/^\[preflight clock\] on server: its clock is 1[12]\d s behind the jumpbox's; set the time right/);
    expect((e as FailureError).hint).toContain('--ignore-preflight NAME');
  });

  it('skips a check named by --ignore-preflight or preflight.ignore, every one with all, and keeps to a machine\'s role', () => {
    const names = (m: Machine, values: Record<string, string[]> = {}, inventory = inv) => preflightChecks({ inventory, machine: m, options: stepOptions({ values }) }).map((c) => c.name);
    expect(names(server)).toEqual(['systemd', 'ports', 'clock', 'etcd-disk']);
    expect(names(node)).toEqual(['systemd', 'ports', 'br-netfilter', 'clock', 'cgroups', 'packages']);
    expect(names(node, { 'ignore-preflight': ['clock', 'ports'] })).toEqual(['systemd', 'br-netfilter', 'cgroups', 'packages']);
    expect(names(node, { 'ignore-preflight': ['all'] })).toEqual([]);
    const ignoring: Inventory = { ...inv, settings: { ...inv.settings, preflight: { ignore: ['cgroups'] } } };
    expect(names(node, {}, ignoring)).toEqual(['systemd', 'ports', 'br-netfilter', 'clock', 'packages']);
  });

  it('its probes go out in the same batch as the plans asked beside it: no round trip more', async () => {
    const t = machine('node-0');
    const facts = coalescedFacts(createFacts(t));
    const ctx = { host: 'node-0', machine: node, inventory: inv, facts, options: stepOptions(), log: { info: () => undefined, debug: () => undefined } };
    await Promise.all([preflightStep.check(ctx), routesStep.plan(ctx)]);
    expect(t.factBatches).toBe(1);
  });
});
