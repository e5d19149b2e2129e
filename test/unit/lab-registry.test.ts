// `lab up --registry` without booting anything: the registry machine in the plan (fixed address,
// not in machines.txt), the lab's cluster.yaml mapping localhost:5001 to it through `registries`
// (accepted by hardway's own parser and rendered as the worker's hosts.toml), the registry's name
// in the cluster machines' cloud-init hosts template, and the registry's config.
import { describe, expect, it } from 'vitest';
import { parseClusterSettings } from '../../src/cluster-settings.ts';
import { parseInventory } from '../../src/inventory.ts';
import { clusterYaml, knownHosts, machinesTxt, sshConfig } from '../../src/lab/outputs.ts';
import { planLab } from '../../src/lab/plan.ts';
import { LAB_REGISTRY_MIRROR, registryConfig, repositoryOf, withRegistryHost } from '../../src/lab/registry.ts';
import { renderMachine } from '../../src/render/machine.ts';

const spec = { name: 'dev', servers: 1, workers: 2, subnet: '10.240.60.0/24', dir: '/srv/lab', registry: true };
const plan = planLab(spec);
const registry = plan.machines[0]!;

describe('lab plan with --registry', () => {
  it('adds the registry machine at .5, before the servers, with its own nspawn name; without --registry there is none', () => {
    expect(plan.machines.map((m) => [m.hostname, m.ip, m.role, m.unit])).toEqual([
      ['registry', '10.240.60.5', 'registry', 'dev-registry'],
      ['server', '10.240.60.10', 'control-plane', 'dev-server'],
      ['node-0', '10.240.60.20', 'worker', 'dev-node-0'],
      ['node-1', '10.240.60.21', 'worker', 'dev-node-1'],
    ]);
    expect(planLab({ ...spec, registry: undefined }).machines.map((m) => m.hostname)).toEqual(['server', 'node-0', 'node-1']);
  });

  it('keeps it out of machines.txt (lab infrastructure), but in known_hosts and ssh_config (hardway lab ssh registry)', () => {
    expect(machinesTxt(plan)).not.toContain('registry');
    const inv = parseInventory(machinesTxt(plan), parseClusterSettings(clusterYaml(undefined, 'dev', { registry: true }), 'cluster.yaml'), { file: 'machines.txt', dir: '/x', clusterFile: 'cluster.yaml' });
    expect(inv.machines.map((m) => m.hostname)).toEqual(['server', 'node-0', 'node-1']);
    const keys = Object.fromEntries(plan.machines.map((m) => [m.hostname, `ssh-ed25519 AAAA${m.hostname}`]));
    expect(knownHosts(plan.machines, keys)).toContain('10.240.60.5,registry,registry.kubernetes.local ssh-ed25519 AAAAregistry');
    expect(sshConfig(plan, '/srv/lab')).toContain('Host registry registry.kubernetes.local 10.240.60.5');
  });
});

describe('the lab cluster.yaml with a registry', () => {
  it('maps localhost:5001 to http://registry:5000 (plain HTTP), which renders as each worker\'s hosts.toml', () => {
    const settings = parseClusterSettings(clusterYaml(undefined, 'dev', { registry: true }), 'cluster.yaml');
    expect(settings.registries).toEqual({ 'localhost:5001': { mirrors: [{ url: LAB_REGISTRY_MIRROR, plainHttp: true, skipVerify: false, capabilities: ['pull', 'resolve'] }] } });
    const inv = parseInventory(machinesTxt(plan), settings, { file: 'machines.txt', dir: '/x', clusterFile: 'cluster.yaml' });
    const hosts = renderMachine(inv, inv.workers[0]!, { containerdMajor: 1, containerdMinor: 6 }).find((f) => f.path === '/etc/containerd/certs.d/localhost_5001_/hosts.toml');
    expect(hosts?.content).toContain('[host."http://registry:5000"]');
  });

  it('keeps a mapping the user made, and adds none without a registry', () => {
    const mine = 'registries:\n  localhost:5001:\n    mirrors:\n      - url: https://my-mirror.example\n';
    expect(parseClusterSettings(clusterYaml(mine, 'dev', { registry: true }), 'cluster.yaml').registries!['localhost:5001']!.mirrors[0]!.url).toBe('https://my-mirror.example');
    expect(parseClusterSettings(clusterYaml(undefined, 'dev'), 'cluster.yaml').registries).toBeUndefined();
  });
});

describe('registry machine files', () => {
  const template = '## template:jinja\n127.0.1.1 {{fqdn}} {{hostname}}\n127.0.0.1 localhost\n';

  it('puts the registry\'s name in the cluster machines\' hosts template once, in a block of its own', () => {
    const once = withRegistryHost(template, registry);
    expect(once).toBe(`${template}# BEGIN hardway lab: lab infrastructure, not cluster machines (written by hardway lab up)\n10.240.60.5 registry.kubernetes.local registry\n# END hardway lab\n`);
    expect(withRegistryHost(once, registry)).toBe(once);
    const moved = withRegistryHost(once, { ...registry, ip: '10.240.61.5' });
    expect(moved.match(/registry\.kubernetes\.local/g)).toHaveLength(1);
    expect(moved).toContain('10.240.61.5 registry.kubernetes.local registry');
  });

  it('serves plain HTTP on :5000 without the package\'s htpasswd auth', () => {
    expect(registryConfig()).toContain('  addr: :5000\n');
    expect(registryConfig()).not.toMatch(/^auth:|htpasswd/m);
  });

  it('pushes an image under its repository without the registry part', () => {
    expect(repositoryOf('localhost/hardway/web:1')).toBe('hardway/web:1');
    expect(repositoryOf('registry.example.com:5000/a/b:2')).toBe('a/b:2');
    expect(repositoryOf('hardway/web:1')).toBe('hardway/web:1');
  });
});
