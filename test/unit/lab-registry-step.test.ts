// What the lab installs on its registry machine is a step: lab-registry plans from probes of the
// registry (the package's state, the config file, the service), a fresh machine plans the install
// and the machine that leaves plans nothing; through the engine, --dry-run shows the plan and
// changes nothing, a run applies and re-plans, a rerun changes nothing, and the run log has it.
import { describe, expect, it } from 'vitest';
import { applyChange, describeChange } from '../../src/engine/apply.ts';
import { REGISTRY_CONFIG, REGISTRY_DEB, REGISTRY_HOSTNAME, REGISTRY_PACKAGE, registryConfig } from '../../src/lab/registry.ts';
import { registryInventory } from '../../src/lab/registry-run.ts';
import { labRegistryStep } from '../../src/lab/registry-step.ts';
import type { LabMachine } from '../../src/lab/types.ts';
import { debianMachine } from '../fixtures/debian-machine.ts';
import { projectDir, runEngine } from './engine.helpers.ts';
import { planOn } from './step-plans.helpers.ts';

const registry: LabMachine = { hostname: REGISTRY_HOSTNAME, fqdn: 'registry.kubernetes.local', ip: '10.240.0.5', role: 'registry', unit: 'lab-registry' };

/**
 * The registry machine as the lab boots it: the .deb and the config staged in its root, the package
 * not installed. dpkg -i installs it as Debian's package does: its scripts enable and start the
 * service (the fake Debian machine knows the commands steps run; this one is the lab's own).
 */
function registryMachine(staged = true) {
  const t = debianMachine(REGISTRY_HOSTNAME, staged ? { files: { [REGISTRY_CONFIG]: registryConfig(), [REGISTRY_DEB]: 'a .deb' } } : {});
  t.state.packagesMissing.push(REGISTRY_PACKAGE);
  const dpkg: string[] = [];
  t.handlers.push([/^DEBIAN_FRONTEND=noninteractive dpkg -i --force-confdef --force-confold (\S+)$/, (m) => {
    dpkg.push(m[1]!);
    t.state.packagesMissing = t.state.packagesMissing.filter((p) => p !== REGISTRY_PACKAGE);
    t.state.units.set(REGISTRY_PACKAGE, { enabled: 'enabled', active: 'active' });
    return { code: 0, stdout: '', stderr: '' };
  }]);
  return Object.assign(t, { dpkg });
}

describe('lab-registry plans from facts: fresh registry machine -> the install, converged -> none', () => {
  const inv = registryInventory(projectDir(), registry);
  const machine = inv.machines[0]!;

  it('the inventory the lab runs it over has the registry machine alone (it is not in machines.txt)', () => {
    expect(inv.machines.map((m) => `${m.hostname} ${m.ip}`)).toEqual(['registry 10.240.0.5']);
    expect(labRegistryStep.targets(inv, {} as never)).toEqual(inv.machines);
  });

  it('fresh (staged .deb and config): dpkg -i of the staged package, enable, start until active; then nothing', async () => {
    const t = registryMachine();
    const fresh = await planOn(labRegistryStep, inv, machine, t);
    expect(fresh.map(describeChange)).toEqual([
      `run: DEBIAN_FRONTEND=noninteractive dpkg -i --force-confdef --force-confold ${REGISTRY_DEB} (${REGISTRY_PACKAGE} is not installed)`,
      `run: systemctl enable --no-reload ${REGISTRY_PACKAGE} (${REGISTRY_PACKAGE} is not installed)`,
      expect.stringMatching(new RegExp(`^run: \\{ systemctl start ${REGISTRY_PACKAGE} \\|\\|`)),
    ]);
    expect(t.changesRun, 'a plan ran a command that is not a probe of the registry').toEqual([]);
    for (const c of fresh) await applyChange(t, c);
    expect(t.dpkg).toEqual([REGISTRY_DEB]);
    expect((await planOn(labRegistryStep, inv, machine, t)).map(describeChange)).toEqual([]);
  });

  it('no config in place: the config goes first (dpkg keeps it), then the install; then nothing', async () => {
    const t = registryMachine(false);
    const changes = await planOn(labRegistryStep, inv, machine, t);
    const plan = changes.map(describeChange);
    expect(plan[0]).toMatch(new RegExp(`^put ${REGISTRY_CONFIG} 0644 root:root.*missing`));
    expect(plan[1]).toMatch(/dpkg -i/);
    for (const c of changes) await applyChange(t, c);
    expect((await planOn(labRegistryStep, inv, machine, t)).map(describeChange)).toEqual([]);
  });

  it('a config that differs is put back and the service restarted for it; then nothing', async () => {
    const t = registryMachine();
    t.files.set(REGISTRY_CONFIG, { content: Buffer.from('version: 0.1\nhttp:\n  addr: :9999\n'), mode: 0o644, owner: 'root:root' });
    t.state.packagesMissing = t.state.packagesMissing.filter((p) => p !== REGISTRY_PACKAGE);
    t.state.units.set(REGISTRY_PACKAGE, { enabled: 'enabled', active: 'active' });
    const changes = await planOn(labRegistryStep, inv, machine, t);
    const plan = changes.map(describeChange);
    expect(plan[0]).toMatch(new RegExp(`^put ${REGISTRY_CONFIG} 0644 root:root.*content differs`));
    expect(plan.some((l) => l.includes(`systemctl restart ${REGISTRY_PACKAGE}`))).toBe(true);
    expect(plan.some((l) => l.includes('dpkg -i'))).toBe(false);
    for (const c of changes) await applyChange(t, c);
    expect(t.text(REGISTRY_CONFIG)).toBe(registryConfig());
    expect((await planOn(labRegistryStep, inv, machine, t)).map(describeChange)).toEqual([]);
  });
});

describe('lab-registry through the engine', () => {
  const inv = registryInventory(projectDir(), registry);

  it('--dry-run shows the plan and changes nothing; a run applies it (re-planned empty) and logs it; a rerun changes nothing', async () => {
    const t = registryMachine();
    const fakes = new Map([[REGISTRY_HOSTNAME, t as never]]);
    const dry = await runEngine([labRegistryStep], inv, fakes, { dryRun: true });
    expect(dry.result).toMatchObject({ ok: true, changed: 3 });
    expect(dry.output).toContain('registry: lab-registry: would change (3 changes)');
    expect(dry.output).toContain(`dpkg -i --force-confdef --force-confold ${REGISTRY_DEB}`);
    expect(t.dpkg).toEqual([]);
    expect(t.changesRun).toEqual([]);

    const run = await runEngine([labRegistryStep], inv, fakes);
    expect(run.result).toMatchObject({ ok: true, changed: 3, failed: 0 });
    expect(t.dpkg).toEqual([REGISTRY_DEB]);
    expect(run.log).toMatch(/registry: lab-registry: plan has 3 change\(s\)/);
    expect(run.log).toContain(`dpkg -i --force-confdef --force-confold ${REGISTRY_DEB}`);

    const again = await runEngine([labRegistryStep], inv, fakes);
    expect(again.result).toMatchObject({ ok: true, changed: 0 });
    expect(again.output).toContain('registry: lab-registry: unchanged');
    expect(t.dpkg).toEqual([REGISTRY_DEB]);
  });

  it('dpkg failing fails the machine with its exit code and output', async () => {
    const t = registryMachine();
    t.handlers.unshift([/^DEBIAN_FRONTEND=noninteractive dpkg -i/, () => ({ code: 1, stdout: '', stderr: 'dpkg: dependency problems prevent configuration of docker-registry' })]);
    const run = await runEngine([labRegistryStep], inv, new Map([[REGISTRY_HOSTNAME, t as never]]));
    expect(run.result.ok).toBe(false);
    expect(run.result.results[0]!.error).toMatch(/dependency problems/);
  });
});
