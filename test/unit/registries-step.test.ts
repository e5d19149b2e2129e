// The containerd step's registry mirrors on fake workers: facts in, changes out. Fresh workers get
// every hosts.toml (and CA) and the config_path that turns them on; a converged worker plans
// nothing; a mirror change is a put that restarts nothing; a registry removed from cluster.yaml
// removes only the directory hardway wrote for it, never one made by hand.
import { chmodSync, copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseClusterSettings } from '../../src/cluster-settings.ts';
import { parseInventory, type Inventory } from '../../src/inventory.ts';
import { containerdStep } from '../../src/steps/containerd.ts';
import { staleRegistryChanges } from '../../src/steps/support/registry-dirs.ts';
import { markedRegistryDirs } from '../../src/probes/containerd.ts';
import { FakeMachineError, FakeTransport } from '../fixtures/fake-transport.ts';
import { serviceStates } from '../../src/probes/systemd.ts';
import { MACHINES, projectDir, runEngine } from './engine.helpers.ts';

const CERTS = '/etc/containerd/certs.d';
const FIXTURE = join(import.meta.dirname, '../fixtures/registries');
const LAB_REGISTRY = 'registries:\n  localhost:5001:\n    mirrors:\n      - url: http://registry:5000\n        plainHttp: true\n';
const DOCKER_MIRROR = '  docker.io:\n    mirrors:\n      - url: https://mirror.example.com\n        ca: mirror-ca.crt\n';

/** A project with containerd's binaries in downloads/ (stand-in bytes) and the fixture CA. */
function project(): string {
  const dir = projectDir();
  mkdirSync(join(dir, 'downloads/worker'), { recursive: true });
  for (const b of ['containerd', 'containerd-shim-runc-v2', 'ctr', 'runc']) {
    writeFileSync(join(dir, 'downloads/worker', b), `#!/bin/sh\n# ${b} stand-in\n`);
    chmodSync(join(dir, 'downloads/worker', b), 0o755);
  }
  copyFileSync(join(FIXTURE, 'mirror-ca.crt'), join(dir, 'mirror-ca.crt'));
  return dir;
}

/** The project's inventory with this cluster.yaml text. */
function inventoryWith(dir: string, clusterYaml: string): Inventory {
  writeFileSync(join(dir, 'cluster.yaml'), clusterYaml);
  return parseInventory(MACHINES, parseClusterSettings(clusterYaml, join(dir, 'cluster.yaml')), { file: join(dir, 'machines.txt'), dir, clusterFile: join(dir, 'cluster.yaml') });
}

/**
 * A worker with systemd (containerd's state, counting restarts) and a shell that answers the
 * certs.d listing from its files and removes what `rm` names.
 */
function worker(name: string): FakeTransport & { restarts: number; containerd: { enabled: string; active: string } } {
  const t = Object.assign(new FakeTransport(name), { restarts: 0, containerd: { enabled: '', active: 'inactive' } });
  const text = (s: string) => ({ code: 0, stdout: s, stderr: '' });
  t.answer(serviceStates, (services) => {
    if (services.join(' ') !== 'containerd systemd-resolved') throw new FakeMachineError(`${name}: asked the states of ${services.join(' ')}`);
    return text(`Id=containerd.service\nUnitFileState=${t.containerd.enabled}\nActiveState=${t.containerd.active}\nLoadState=${t.containerd.enabled ? 'loaded' : 'not-found'}\n\n` +
      'Id=systemd-resolved.service\nUnitFileState=\nActiveState=inactive\nLoadState=not-found\n');
  });
  // The certs.d listing: every entry of each directory whose hosts.toml carries hardway's marker.
  t.answer(markedRegistryDirs, () => {
    const dirs = new Set([...t.files.keys()].filter((p) => p.startsWith(`${CERTS}/`) && p.endsWith('/hosts.toml')).map((p) => p.slice(CERTS.length + 1, -'/hosts.toml'.length)));
    const marked = [...dirs].filter((d) => !d.includes('/') && t.text(`${CERTS}/${d}/hosts.toml`).startsWith('# Managed by hardway')).sort();
    const lines = marked.flatMap((d) => [...t.files.keys()].filter((p) => p.startsWith(`${CERTS}/${d}/`)).map((p) => p.slice(CERTS.length + 1)).sort());
    return text(lines.map((l) => `${l}\n`).join(''));
  });
  t.handlers.push(
    [/^systemctl enable --no-reload containerd$/, () => ((t.containerd.enabled = 'enabled'), text(''))],
    [/^systemctl daemon-reload$/, () => text('')],
    [/^mkdir -p \/var\/lib\/hardway\/restart-due && touch \/var\/lib\/hardway\/restart-due\/containerd$/, () => text('')],
    [/^\{ systemctl (start|restart) containerd \|\|/, (m) => {
      if (m[1] === 'restart') t.restarts++;
      t.containerd.active = 'active';
      return text('');
    }],
    [/^rm -(?:rf|f) -- (.+)$/, (m) => {
      for (const target of m[1]!.split(' ')) for (const p of [...t.files.keys()]) if (p === target || p.startsWith(`${target}/`)) t.files.delete(p);
      return text('');
    }],
  );
  return t;
}


function cluster(inv: Inventory) {
  return new Map(inv.machines.map((m) => [m.hostname, worker(m.hostname)]));
}

/** The planned lines of one machine in a dry run's output. */
const planned = (output: string, host: string) => output.split('\n').filter((l) => l.startsWith(`${host}:   put`) || l.startsWith(`${host}:   run`)).map((l) => l.slice(host.length + 4));

describe('containerd step: registry mirrors', () => {
  it('on a fresh worker plans config.toml with config_path and each registry\'s hosts.toml and CA, restarting nothing for them', async () => {
    const inv = inventoryWith(project(), LAB_REGISTRY + DOCKER_MIRROR);
    const fakes = cluster(inv);
    const { output } = await runEngine([containerdStep], inv, fakes, { dryRun: true, only: ['node-0'] });
    const lines = planned(output, 'node-0');
    expect(lines.filter((l) => l.startsWith('put /etc/containerd/'))).toEqual([
      'put /etc/containerd/config.toml 0644 root:root (missing)',
      `put ${CERTS}/localhost_5001_/hosts.toml 0644 root:root (missing)`,
      `put ${CERTS}/docker.io/hosts.toml 0644 root:root (missing)`,
      `put ${CERTS}/docker.io/mirror-1-ca.crt 0644 root:root (missing)`,
    ]);
    expect(lines.some((l) => l.startsWith('run: rm'))).toBe(false);
    // containerd starts for its config and binaries; no hosts.toml is a reason to restart it.
    const restart = lines.find((l) => l.startsWith('run: { systemctl restart containerd'))!;
    expect(restart).toMatch(/\(input changed: \/etc\/containerd\/config\.toml, /);
    expect(restart).not.toContain('certs.d');
    expect(fakes.get('node-0')!.changesRun).toEqual([]);
  });

  it('converges: a rerun plans nothing, and asks for the certs.d listing in the same facts round trip', async () => {
    const inv = inventoryWith(project(), LAB_REGISTRY + DOCKER_MIRROR);
    const fakes = cluster(inv);
    const first = await runEngine([containerdStep], inv, fakes, { only: ['node-0'] });
    expect(first.result.ok).toBe(true);
    const node0 = fakes.get('node-0')!;
    expect(node0.text(`${CERTS}/localhost_5001_/hosts.toml`)).toContain('[host."http://registry:5000"]');
    expect(node0.restarts).toBe(1);
    node0.commands.length = 0;
    const second = await runEngine([containerdStep], inv, fakes, { only: ['node-0'] });
    expect(second.result).toMatchObject({ ok: true, changed: 0 });
    expect(node0.changesRun).toEqual([]);
    expect(node0.restarts).toBe(1);
    expect(node0.commands.filter((c) => c.startsWith('facts: probe')).length).toBe(2); // the service states (systemd-resolved's with containerd's), certs.d
  });

  it('a changed mirror is one put of its hosts.toml: containerd keeps running (reads it at the next pull)', async () => {
    const dir = project();
    const fakes = cluster(inventoryWith(dir, LAB_REGISTRY));
    await runEngine([containerdStep], inventoryWith(dir, LAB_REGISTRY), fakes, { only: ['node-0'] });
    const node0 = fakes.get('node-0')!;
    node0.commands.length = 0;
    const moved = inventoryWith(dir, LAB_REGISTRY.replace('http://registry:5000', 'http://registry.kubernetes.local:5000'));
    const r = await runEngine([containerdStep], moved, fakes, { only: ['node-0'] });
    expect(r.result).toMatchObject({ ok: true, changed: 1 });
    expect(node0.uploads.at(-1)!.path).toBe(`${CERTS}/localhost_5001_/hosts.toml`);
    expect(node0.changesRun).toEqual([]);
    expect(node0.restarts).toBe(1);
  });

  it('turning registries on changes config.toml (config_path), which restarts containerd once', async () => {
    const dir = project();
    const fakes = cluster(inventoryWith(dir, ''));
    await runEngine([containerdStep], inventoryWith(dir, ''), fakes, { only: ['node-0'] });
    const node0 = fakes.get('node-0')!;
    expect(node0.restarts).toBe(1);
    expect(node0.text('/etc/containerd/config.toml')).not.toContain('config_path');
    const r = await runEngine([containerdStep], inventoryWith(dir, LAB_REGISTRY), fakes, { only: ['node-0'], dryRun: true });
    expect(planned(r.output, 'node-0')).toEqual([
      'run: mkdir -p /var/lib/hardway/restart-due && touch /var/lib/hardway/restart-due/containerd (remember that containerd must restart, should this run stop before it does)',
      'put /etc/containerd/config.toml 0644 root:root (content differs)',
      `put ${CERTS}/localhost_5001_/hosts.toml 0644 root:root (missing)`,
      'run: { systemctl restart containerd || { systemctl daemon-reload && systemctl restart containerd; } || { journalctl -u containerd -n 15 --no-pager -o cat >&2; exit 1; }; } && rm -f /var/lib/hardway/restart-due/containerd && for i in $(seq 180); do systemctl is-active --quiet containerd && exit 0; sleep 0.5; done; echo \'containerd did not become active within 90s; its last log lines:\' >&2; journalctl -u containerd -n 15 --no-pager -o cat >&2; exit 1 (input changed: /etc/containerd/config.toml)',
    ]);
  });

  it('a registry removed from cluster.yaml: rm of only its hardway-marked directory; a hand-made one stays', async () => {
    const dir = project();
    const fakes = cluster(inventoryWith(dir, LAB_REGISTRY + DOCKER_MIRROR));
    await runEngine([containerdStep], inventoryWith(dir, LAB_REGISTRY + DOCKER_MIRROR), fakes, { only: ['node-0'] });
    const node0 = fakes.get('node-0')!;
    // Made by hand: a directory of its own, and one whose hosts.toml does not carry the marker.
    node0.files.set(`${CERTS}/quay.io/hosts.toml`, { content: Buffer.from('server = "https://quay.io"\n'), mode: 0o644, owner: 'root:root' });
    node0.files.set(`${CERTS}/ghcr.io/ca.crt`, { content: Buffer.from('x'), mode: 0o644, owner: 'root:root' });
    node0.commands.length = 0;
    const removed = inventoryWith(dir, LAB_REGISTRY);
    const plan = await runEngine([containerdStep], removed, fakes, { only: ['node-0'], dryRun: true });
    expect(planned(plan.output, 'node-0')).toEqual([
      `run: rm -rf -- ${CERTS}/docker.io (hardway wrote it for registry docker.io, which cluster.yaml no longer lists under registries)`,
    ]);
    const r = await runEngine([containerdStep], removed, fakes, { only: ['node-0'] });
    expect(r.result).toMatchObject({ ok: true, changed: 1 });
    expect([...node0.files.keys()].filter((p) => p.startsWith(CERTS)).sort()).toEqual([
      `${CERTS}/ghcr.io/ca.crt`,
      `${CERTS}/localhost_5001_/hosts.toml`,
      `${CERTS}/quay.io/hosts.toml`,
    ]);
    expect(node0.restarts).toBe(1);
    // Every registry gone (registries: {}): config_path stays, so nothing restarts; the last directory goes.
    const none = await runEngine([containerdStep], inventoryWith(dir, 'registries: {}\n'), fakes, { only: ['node-0'] });
    expect(none.result).toMatchObject({ ok: true, changed: 1 });
    expect([...node0.files.keys()].filter((p) => p.startsWith(CERTS)).sort()).toEqual([`${CERTS}/ghcr.io/ca.crt`, `${CERTS}/quay.io/hosts.toml`]);
    expect(node0.restarts).toBe(1);
  });
});

describe('staleRegistryChanges (facts in, changes out)', () => {
  const listing = (lines: string[], code = 0) => ({ code, stdout: lines.map((l) => `${l}\n`).join('') });
  const texts = (cs: ReturnType<typeof staleRegistryChanges>) => cs.map((c) => c.cmd.text);

  it('nothing listed, nothing to remove', () => {
    expect(staleRegistryChanges(listing([]), [`${CERTS}/docker.io/hosts.toml`])).toEqual([]);
  });

  it('removes a marked directory no registry renders, and a stale mirror CA in a kept one, nothing else', () => {
    const found = listing(['docker.io/hosts.toml', 'docker.io/mirror-1-ca.crt', 'docker.io/mirror-2-ca.crt', 'docker.io/notes.txt', 'localhost_5001_/hosts.toml']);
    expect(texts(staleRegistryChanges(found, [`${CERTS}/docker.io/hosts.toml`, `${CERTS}/docker.io/mirror-1-ca.crt`, '/etc/containerd/config.toml']))).toEqual([
      `rm -f -- ${CERTS}/docker.io/mirror-2-ca.crt`,
      `rm -rf -- ${CERTS}/localhost_5001_`,
    ]);
  });

  it('ignores names that are not plain directory names, and refuses a listing that failed', () => {
    expect(staleRegistryChanges(listing(['../etc/hosts.toml', '/hosts.toml', 'a b/hosts.toml']), [])).toEqual([]);
    expect(() => staleRegistryChanges(listing([], 1), [])).toThrow(/could not list \/etc\/containerd\/certs\.d \(exit 1\)/);
  });
});
