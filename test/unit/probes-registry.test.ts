// The registry of probes (src/probes/index.ts): every probe hardway has, each under a name of its
// own; facts run only the registry's own probes, and the test machine accepts only their names,
// so what tests allow and what production asks cannot drift apart; it answers each by that name
// from the arguments the probe was asked with.
import { describe, expect, it } from 'vitest';
import * as containerd from '../../src/probes/containerd.ts';
import * as etcdctl from '../../src/probes/etcdctl.ts';
import * as fn from '../../src/probes/function.ts';
import * as kubectl from '../../src/probes/kubectl.ts';
import * as kubelet from '../../src/probes/kubelet.ts';
import * as names from '../../src/probes/names.ts';
import * as network from '../../src/probes/network.ts';
import * as system from '../../src/probes/system.ts';
import * as systemd from '../../src/probes/systemd.ts';
import { PROBES } from '../../src/probes/index.ts';
import { probe } from '../../src/probes/probe.ts';
import { createFacts, FACTS_SCRIPT } from '../../src/engine/facts.ts';
import { sh } from '../../src/shell.ts';
import { FakeTransport } from '../fixtures/fake-transport.ts';
import { LocalTransport } from '../../src/transport/local.ts';

const defined = [containerd, etcdctl, fn, kubectl, kubelet, names, network, system, systemd].flatMap((m) => Object.values(m).filter((v) => typeof v === 'object' && v !== null && 'ask' in v)) as { name: string }[];

describe('the probe registry', () => {
  it('holds every probe defined in src/probes/, each under a name of its own', () => {
    expect(defined.length).toBeGreaterThan(30);
    expect(new Set(defined.map((p) => p.name)).size).toBe(defined.length);
    expect([...PROBES.keys()].sort()).toEqual(defined.map((p) => p.name).sort());
  });

  it("every kubectl read is a probe of kubectl.ts, every etcdctl read one of etcdctl.ts, the waits among them", () => {
    // The jumpbox's kubectl (doctor's lists, the bundle's tables) is asked with the kubectl it runs.
    const jumpbox = { kubectl: 'kubectl', kubeconfig: 'pki/jumpbox.kubeconfig', server: 'https://10.240.0.10:6443' };
    const samples: unknown[][] = [[], [['nodes/a']], ['a'], [5], [true], ['a', 'b'], [5, ['nodes/a']], [5, 'a', 'b'], [jumpbox], [jumpbox, 'nodes']];
    const commands = (p: { ask(...a: unknown[]): { cmd: { text: string } } }) => samples.flatMap((args) => {
      try {
        return [p.ask(...args).cmd.text];
      } catch {
        return [];
      }
    });
    const running = (re: RegExp) => [...PROBES.values()].filter((p) => commands(p as never).some((t) => re.test(t))).map((p) => p.name).sort();
    const namesOf = (m: object) => Object.values(m).filter((v) => typeof v === 'object' && v !== null && 'ask' in v).map((v) => (v as { name: string }).name).sort();
    expect(running(/kubectl --kubeconfig/)).toEqual(namesOf(kubectl));
    expect(running(/etcdctl --endpoints/)).toEqual(namesOf(etcdctl));
    expect(namesOf(kubectl)).toEqual(expect.arrayContaining(['wait-api', 'node-listed']));
    expect(namesOf(etcdctl)).toContain('wait-etcd');
  });

  it('facts refuse a probe made outside the registry, even under a registered name, before anything runs', async () => {
    const t = new LocalTransport({ machine: 'jumpbox' });
    const facts = createFacts(t);
    const stray = probe('routes', () => sh`touch /tmp/should-never-run`);
    await expect(facts.batch([stray.ask()])).rejects.toThrow('"routes" is not a probe of hardway\'s registry');
    await expect(facts.ask({ x: probe('elsewhere', () => sh`true`).ask() })).rejects.toThrow('"elsewhere" is not a probe');
    // The registry's own run.
    const { up } = await facts.ask({ up: system.clock.ask() });
    expect(Number(up.stdout)).toBeGreaterThan(1_700_000_000);
  });

  it('facts refuse a request the registry did not issue: a copy with another command, or one made by hand', async () => {
    const facts = createFacts(new FakeTransport('node-0'));
    const real = names.hostname.ask();
    // A copy keeps the private mark and the registry's probe, but carries another command.
    const copy = { ...real, cmd: sh`touch /tmp/should-never-run` } as typeof real;
    await expect(facts.batch([copy])).rejects.toThrow('"hostname": a probe request the registry did not issue');
    // Made by hand, every field of a real one set.
    const byHand = Object.assign(Object.create(null) as object, { op: 'P', probe: 'hostname', of: names.hostname, cmd: sh`hostname`, parse: (a: unknown) => a });
    await expect(facts.ask({ h: byHand as typeof real })).rejects.toThrow('a probe request the registry did not issue');
    await expect(facts.wait(copy)).rejects.toThrow('a probe request the registry did not issue');
    // What the registry issued runs, and cannot be changed afterwards.
    expect(Object.isFrozen(real)).toBe(true);
    expect(await facts.ask({ h: real })).toEqual({ h: 'node-0' });
  });

  it('the test machine answers only names of the registry', async () => {
    const fake = new FakeTransport('node-0');
    const madeUp = probe('made-up', () => sh`hostname`);
    // Facts told to accept it send it; the machine refuses it by name.
    const open = createFacts(fake, undefined, { probes: new Map([['made-up', madeUp]]) });
    await expect(open.ask({ x: madeUp.ask() })).rejects.toThrow('asked "made-up", which is not a probe of the registry');
    const facts = createFacts(fake);
    expect(await facts.ask({ h: names.hostname.ask() })).toEqual({ h: 'node-0' });
  });
});

describe('the test machine answers a probe by its name and arguments', () => {
  it('calls the answer of that name with the arguments the probe was asked with, as the real batch script carries them', async () => {
    const fake = new FakeTransport('node-0');
    const asked: unknown[][] = [];
    fake.answer(system.pathMode, (path) => (asked.push([path]), { code: 0, stdout: path === '/var/lib/etcd' ? '700\n' : '' }))
      .answer(system.sysctls, (keys) => (asked.push([...keys]), { code: 0, stdout: keys.map((k) => `${k} = 1\n`).join('') }));
    const facts = createFacts(fake);
    const got = await facts.ask({ etcd: system.pathMode.ask('/var/lib/etcd'), other: system.pathMode.ask('/x y'), k: system.sysctls.ask(['net.ipv4.ip_forward']) });
    expect(got).toEqual({ etcd: '700', other: '', k: new Map([['net.ipv4.ip_forward', '1']]) });
    expect(asked).toEqual([['/var/lib/etcd'], ['/x y'], ['net.ipv4.ip_forward']]);
    // One batch of the real script's text; each probe logged with the command a machine would run.
    expect(fake.factBatches).toBe(1);
    expect(fake.commands).toContain("facts: probe stat -c %a '/x y' 2>/dev/null");
  });

  it('each probe line meets its own arguments: after remembered digests and file reads, and merged by plans asking at once', async () => {
    const fake = new FakeTransport('node-0', { files: { '/etc/a': 'a\n' } });
    const sent: string[][] = [];
    fake.answer(systemd.serviceStates, (services) => (sent.push([...services]), { code: 0, stdout: services.map((n) => `Id=${n}.service\nActiveState=active\n`).join('\n') }));
    const facts = createFacts(fake);
    facts.remember('/etc/a', 'ab'.repeat(32));
    const [file, , states] = await facts.batch([{ op: 'S', path: '/etc/a' }, names.hostname.ask(), systemd.serviceStates.ask(['etcd'])]);
    expect(file).toMatchObject({ exists: true });
    expect(systemd.serviceStates.ask(['etcd']).parse(states as never).get('etcd')).toMatchObject({ active: 'active' });
    const { coalescedFacts } = await import('../../src/engine/coalesced-facts.ts');
    const shared = coalescedFacts(createFacts(fake));
    await Promise.all([shared.ask({ s: systemd.serviceStates.ask(['kubelet']) }), shared.ask({ h: names.hostname.ask(), s: systemd.serviceStates.ask(['containerd']) })]);
    // The merged request's arguments are the union its one command asks for.
    expect(sent).toEqual([['etcd'], ['kubelet', 'containerd']]);
    expect(fake.commands.filter((c) => c.startsWith('facts: H '))).toEqual(['facts: H /etc/a']);
  });

  it('a probe of the registry the machine has no answer for is an error naming it', async () => {
    const facts = createFacts(new FakeTransport('node-0'));
    await expect(facts.ask({ r: network.routes.ask() })).rejects.toThrow('node-0: the fake machine has no answer for probe "routes"');
  });

  it('refuses a batch whose probe line comes without its arguments, or carries another command than they make', async () => {
    const fake = new FakeTransport('node-0');
    const script = FACTS_SCRIPT;
    await expect(fake.exec(script, { stdin: 'p hostname printf node-0\n' })).rejects.toThrow('probe "hostname" came without its arguments');
    await expect(fake.exec(script, { stdin: 'p path-mode touch /tmp/x\n', probes: [{ probe: 'path-mode', args: ['/etc'] }] }))
      .rejects.toThrow('probe "path-mode" sent "touch /tmp/x", not the command its arguments make: "stat -c %a /etc 2>/dev/null"');
  });
});
