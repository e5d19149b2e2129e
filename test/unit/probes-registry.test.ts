// The registry of probes (src/probes/index.ts): every probe hardway has, each under a name of its
// own; facts run only the registry's own probes, and the test machine accepts only their names,
// so what tests allow and what production asks cannot drift apart.
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
import { createFacts } from '../../src/engine/facts.ts';
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
    const samples: unknown[][] = [[], [['nodes/a']], ['a'], [5], [true], ['a', 'b'], [5, ['nodes/a']], [5, 'a', 'b']];
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
