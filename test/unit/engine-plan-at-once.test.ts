// The at-once plan (src/engine/plan-at-once.ts): a rerun on converged machines asks each machine
// for every step's facts in one round trip and reuses the empty plans; anything else plans step by
// step exactly as before.
import { describe, expect, it } from 'vitest';
import { fileChanges } from '../../src/engine/desired.ts';
import type { ChangeStep, Step } from '../../src/engine/types.ts';
import { sh } from '../../src/shell.ts';
import { inspect } from '../../src/steps/support/inspect.ts';
import { FailureError } from '../../src/errors.ts';
import { fakeCluster, inventoryOf, runEngine } from './engine.helpers.ts';
import { apiReady } from '../../src/probes/kubectl.ts';
import { aptSources, brNetfilterState, cgroupControllers, clock, freeKilobytes, installedPackages, listeners, pathsPresent } from '../../src/probes/system.ts';
import { serviceStates } from '../../src/probes/systemd.ts';

const fileStep = (name: string, path: string): Step => ({
  name,
  title: `Write ${path}`,
  targets: (inv) => inv.machines,
  plan: (ctx) => fileChanges(ctx.facts, [{ path, content: Buffer.from(`${name} on ${ctx.machine.hostname}\n`), mode: 0o644 }]),
});
const steps = [fileStep('a', '/etc/a.conf'), fileStep('b', '/etc/b.conf'), fileStep('c', '/etc/c.conf')];
const batches = (fakes: ReturnType<typeof fakeCluster>) => [...fakes.values()].map((f) => f.factBatches);
const reset = (fakes: ReturnType<typeof fakeCluster>) => {
  for (const f of fakes.values()) {
    f.factBatches = 0;
    f.commands.length = 0;
  }
};

describe('planning every step at once', () => {
  it('a rerun on converged machines takes one round trip per machine for all three steps, and changes nothing', async () => {
    const inv = inventoryOf();
    const fakes = fakeCluster(inv);
    expect((await runEngine(steps, inv, fakes)).result).toMatchObject({ ok: true, changed: 9 });
    reset(fakes);
    const again = await runEngine(steps, inv, fakes);
    expect(again.result).toMatchObject({ ok: true, changed: 0 });
    expect(again.result.results).toHaveLength(9);
    expect(batches(fakes)).toEqual([1, 1, 1]);
    // Each file was asked about once, in the one batch.
    for (const f of fakes.values()) expect(f.commands.filter((c) => c.startsWith('facts: S /etc/')).sort()).toEqual(['facts: S /etc/a.conf', 'facts: S /etc/b.conf', 'facts: S /etc/c.conf']);
  });

  it('one difference anywhere: the steps plan one by one and fix it, as without the at-once plan', async () => {
    const inv = inventoryOf();
    const fakes = fakeCluster(inv);
    await runEngine(steps, inv, fakes);
    fakes.get('node-1')!.files.get('/etc/c.conf')!.content = Buffer.from('changed by hand\n');
    reset(fakes);
    const again = await runEngine(steps, inv, fakes);
    expect(again.result).toMatchObject({ ok: true, changed: 1 });
    expect(again.result.results.filter((r) => r.status === 'changed').map((r) => `${r.step}@${r.machine}`)).toEqual(['c@node-1']);
    expect(fakes.get('node-1')!.text('/etc/c.conf')).toBe('c on node-1\n');
    // The at-once round, then each step's own plan (and node-1's re-plan of c).
    expect(fakes.get('node-0')!.factBatches).toBe(1 + 3);
    expect(fakes.get('node-1')!.factBatches).toBe(1 + 3 + 1);
  });

  it('a plan that needs a command of its own (a wait) makes the steps plan one by one', async () => {
    const inv = inventoryOf();
    const fakes = fakeCluster(inv);
    for (const f of fakes.values()) f.answer(apiReady, () => ({ code: 0, stdout: '' }));
    const waits: Step = { name: 'waits', title: 'Wait', targets: (inv) => inv.machines, plan: async (ctx) => (await ctx.facts.wait(apiReady.ask(1)), []) };
    await runEngine(steps, inv, fakes);
    reset(fakes);
    const again = await runEngine([...steps, waits], inv, fakes);
    expect(again.result).toMatchObject({ ok: true, changed: 0 });
    // The at-once round, then each step's own plan; the wait is a facts script of its own.
    expect(batches(fakes)).toEqual([1 + 3 + 1, 1 + 3 + 1, 1 + 3 + 1]);
    for (const f of fakes.values()) expect(f.commands.filter((c) => c.startsWith('facts: probe { for i in $(seq 1); do out=$(kubectl'))).toHaveLength(1);
  });

  it('a single step is planned only once', async () => {
    const inv = inventoryOf();
    const fakes = fakeCluster(inv);
    await runEngine([steps[0]!], inv, fakes);
    reset(fakes);
    await runEngine([steps[0]!], inv, fakes);
    expect(batches(fakes)).toEqual([1, 1, 1]);
  });

  it("asks systemd once for every step's services", async () => {
    const inv = inventoryOf();
    const fakes = fakeCluster(inv);
    const shown: string[] = [];
    for (const f of fakes.values()) {
      f.answer(serviceStates, (services) => {
        // As systemctl is asked: by unit.
        shown.push(`${f.machine}: ${services.map((s) => `${s}.service`).join(' ')}`);
        return { code: 0, stdout: services.map((s) => `Id=${s}.service\nUnitFileState=enabled\nActiveState=active\nLoadState=loaded\n`).join('\n') };
      });
    }
    const wants = (name: string, service: string): Step => ({
      name, title: name, targets: (inv) => inv.machines,
      plan: async (ctx) => ((await inspect(ctx.facts, [], [service])).services.get(service)?.active === 'active' ? [] : [{ kind: 'exec', cmd: sh`systemctl start ${service}`, reason: 'down' }]),
    });
    const r = await runEngine([wants('one', 'etcd'), wants('two', 'kubelet')], inv, fakes);
    expect(r.result).toMatchObject({ ok: true, changed: 0 });
    expect(shown.sort()).toEqual(['node-0: etcd.service kubelet.service', 'node-1: etcd.service kubelet.service', 'server: etcd.service kubelet.service']);
  });

  it('a machine that cannot be reached is tried once, and the first step reports it', async () => {
    const inv = inventoryOf();
    const fakes = fakeCluster(inv);
    await runEngine(steps, inv, fakes);
    let tries = 0;
    Object.defineProperty(fakes.get('node-1')!, 'execError', { get: () => (tries++, new Error('node-1: connection refused')) });
    const again = await runEngine(steps, inv, fakes);
    expect(tries).toBe(1);
    expect(again.result.results.filter((r) => r.status === 'failed').map((r) => `${r.step}@${r.machine}: ${r.error}`)).toEqual(['a@node-1: node-1: connection refused']);
  });
  describe('verifies and checks in the same round', () => {
    // A step whose verify reads a file, and a check that reads another: on a converged cluster both
    // go in the at-once round with the plans, one round trip per machine for the whole command.
    const verified: ChangeStep = { ...(fileStep('v', '/etc/v.conf') as ChangeStep), verify: async (ctx) => void (await ctx.facts.stat(['/etc/v.conf'])) };
    const problems = new Map<string, string>();
    const checkRuns: string[] = [];
    const check: Step = {
      kind: 'check', name: 'check', title: 'Check', targets: (inv) => inv.machines,
      async check(ctx) {
        checkRuns.push(ctx.machine.hostname);
        const f = (await ctx.facts.stat(['/etc/a.conf'])).get('/etc/a.conf')!;
        if (problems.has(ctx.machine.hostname)) throw new FailureError(`${problems.get(ctx.machine.hostname)} (${f.exists ? 'a.conf there' : 'no a.conf'})`);
      },
    };

    it('a converged rerun with a verify and a check takes one round trip per machine, and each check runs once', async () => {
      const inv = inventoryOf();
      const fakes = fakeCluster(inv);
      await runEngine([steps[0]!, verified, check], inv, fakes);
      reset(fakes);
      checkRuns.length = 0;
      const again = await runEngine([steps[0]!, verified, check], inv, fakes);
      expect(again.result).toMatchObject({ ok: true, changed: 0 });
      expect(again.result.results).toHaveLength(9);
      expect(batches(fakes)).toEqual([1, 1, 1]);
      expect(checkRuns.sort()).toEqual(['node-0', 'node-1', 'server']);
    });

    it('a check that fails in the at-once round fails its step on that machine with its own message', async () => {
      const inv = inventoryOf();
      const fakes = fakeCluster(inv);
      await runEngine([steps[0]!, verified, check], inv, fakes);
      reset(fakes);
      checkRuns.length = 0;
      problems.set('node-1', 'node-1 is unwell');
      try {
        const again = await runEngine([steps[0]!, verified, check], inv, fakes);
        expect(again.result).toMatchObject({ ok: false, changed: 0, failed: 1 });
        expect(again.result.results.filter((r) => r.status === 'failed').map((r) => `${r.step}@${r.machine}: ${r.error}`)).toEqual(['check@node-1: node-1 is unwell (a.conf there)']);
        expect(batches(fakes)).toEqual([1, 1, 1]);
        expect(checkRuns.filter((h) => h === 'node-1')).toHaveLength(1);
      } finally {
        problems.clear();
      }
    });

    it('a check that needs a command of its own (a wait) runs again in its step, and the wait is made once', async () => {
      const inv = inventoryOf();
      const fakes = fakeCluster(inv);
      for (const f of fakes.values()) f.answer(apiReady, () => ({ code: 0, stdout: '' }));
      const waits: Step = {
        kind: 'check', name: 'waits', title: 'Wait', targets: (inv) => inv.machines,
        // It swallows what the wait threw: the at-once round must not keep that outcome.
        check: async (ctx) => void (await ctx.facts.wait(apiReady.ask(1)).catch(() => undefined)),
      };
      await runEngine(steps, inv, fakes);
      reset(fakes);
      const again = await runEngine([...steps, waits], inv, fakes);
      expect(again.result).toMatchObject({ ok: true, changed: 0 });
      // The at-once round, then the check's wait in its step (a facts script of its own).
      expect(batches(fakes)).toEqual([1 + 1, 1 + 1, 1 + 1]);
      for (const f of fakes.values()) expect(f.commands.filter((c) => c.startsWith('facts: probe { for i in $(seq 1); do out=$(kubectl'))).toHaveLength(1);
    });

    it('a difference anywhere: every verify and check runs in its step after the changes, as without the at-once round', async () => {
      const inv = inventoryOf();
      const fakes = fakeCluster(inv);
      await runEngine([steps[0]!, verified, check], inv, fakes);
      fakes.get('server')!.files.delete('/etc/a.conf');
      reset(fakes);
      checkRuns.length = 0;
      problems.set('server', 'server checked');
      try {
        const again = await runEngine([steps[0]!, verified, check], inv, fakes);
        // The check ran again after a.conf was written back: it saw the file.
        expect(again.result.results.filter((r) => r.status === 'failed').map((r) => `${r.step}@${r.machine}: ${r.error}`)).toEqual(['check@server: server checked (a.conf there)']);
        expect(checkRuns.filter((h) => h === 'server')).toHaveLength(2);
      } finally {
        problems.clear();
      }
    });
  });
});

describe('preflight in the at-once round', () => {
  /** What a machine hardway can run on answers the preflight checks' probes (its clock `offS` off). */
  const preflightAnswers = (f: ReturnType<typeof fakeCluster> extends Map<string, infer T> ? T : never, offS = 0) => {
    const ok = (stdout: string) => ({ code: 0, stdout, stderr: '' });
    f.answer(pathsPresent, (paths) => ok(paths.filter((p) => p === '/run/systemd/system').map((p) => `${p}\n`).join('')))
      .answer(listeners, () => ok(''))
      .answer(brNetfilterState, () => ok('present\n'))
      .answer(clock, () => ok(`${Math.floor(Date.now() / 1000) + offS}\n`))
      .answer(freeKilobytes, () => ok('Filesystem 1024-blocks Used Available Capacity Mounted on\n/dev/vda 263174212 28000000 78000000 27% /\n'))
      .answer(cgroupControllers, () => ok('v2 cpu memory pids\n'))
      .answer(installedPackages, () => ok('socat install ok installed\nconntrack install ok installed\nipset install ok installed\nkmod install ok installed\niptables install ok installed\n'))
      .answer(aptSources, () => ok('apt\n1\n'));
  };

  it("a no-op rerun asks each machine once, preflight's probes included; a failed check is reported from that same round", async () => {
    const { preflightStep } = await import('../../src/steps/preflight.ts');
    const inv = inventoryOf();
    const fakes = fakeCluster(inv);
    for (const f of fakes.values()) preflightAnswers(f);
    const withPreflight = [preflightStep, ...steps];
    expect((await runEngine(withPreflight, inv, fakes)).result).toMatchObject({ ok: true, changed: 9 });
    reset(fakes);
    const again = await runEngine(withPreflight, inv, fakes);
    expect(again.result).toMatchObject({ ok: true, changed: 0 });
    expect(batches(fakes)).toEqual([1, 1, 1]);
    expect(fakes.get('node-1')!.commands).toContain('facts: probe date +%s');
    // node-1's clock a minute behind: the rerun still asks each machine once, and says why node-1 fails.
    const late = fakeCluster(inv);
    for (const [name, f] of late) {
      preflightAnswers(f, name === 'node-1' ? -60 : 0);
      for (const [path, file] of fakes.get(name)!.files) f.files.set(path, file);
    }
    const failed = await runEngine(withPreflight, inv, late);
    expect(batches(late)).toEqual([1, 1, 1]);
    expect(failed.result.results.filter((r) => r.status === 'failed').map((r) => `${r.step}@${r.machine}: ${r.error}`)).toEqual([expect.stringMatching(/^preflight@node-1: \[preflight clock\] on node-1: its clock is [56]\d s behind the jumpbox's;/)]);
  });
});
