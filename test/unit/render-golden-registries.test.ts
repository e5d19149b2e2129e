// Golden files of a cluster.yaml with `registries` (test/fixtures/registries): each worker's
// containerd files, for both config schemas hardway writes (containerd 1.6: schema 2, 2.0: schema
// 3), under test/golden-registries/containerd-<version>/<hostname>/<path on the machine>; every
// other file must be byte for byte what the same cluster renders without `registries`. Regenerate
// with `UPDATE_GOLDEN=1 npx vitest run test/unit/render-golden-registries.test.ts` and review the diff.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { defaultSettings, loadClusterSettings } from '../../src/cluster-settings.ts';
import { parseInventory } from '../../src/inventory.ts';
import { renderMachine } from '../../src/render/machine.ts';
import { readToml, at } from './render-fixtures.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const UPDATE = process.env.UPDATE_GOLDEN === '1';
const FIXTURE = join(ROOT, 'test/fixtures/registries');
const GOLDEN = join(ROOT, 'test/golden-registries');
const machines = readFileSync(join(ROOT, 'examples/machines.txt'), 'utf8');
const inventory = (settings = defaultSettings()) => parseInventory(machines, settings, { file: join(FIXTURE, 'machines.txt'), dir: FIXTURE, clusterFile: join(FIXTURE, 'cluster.yaml') });
const withRegistries = inventory(loadClusterSettings(join(FIXTURE, 'cluster.yaml')));
const without = inventory();

function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => '/' + relative(dir, join(e.parentPath, e.name))).sort();
}

for (const containerd of [{ version: '1.6', major: 1, minor: 6, config: 'io.containerd.grpc.v1.cri' }, { version: '2.0', major: 2, minor: 0, config: 'io.containerd.cri.v1.images' }]) {
  const opts = { containerdMajor: containerd.major, containerdMinor: containerd.minor };
  describe(`registries golden files, containerd ${containerd.version}`, () => {
    for (const machine of withRegistries.machines) {
      it(`${machine.hostname}: the files under /etc/containerd equal the golden files; everything else is as without registries`, () => {
        const dir = join(GOLDEN, `containerd-${containerd.version}`, machine.hostname);
        const files = renderMachine(withRegistries, machine, opts);
        const mine = files.filter((f) => f.path.startsWith('/etc/containerd/'));
        if (UPDATE) {
          rmSync(dir, { recursive: true, force: true });
          for (const f of mine) {
            mkdirSync(dirname(join(dir, f.path)), { recursive: true });
            writeFileSync(join(dir, f.path), f.content);
          }
        }
        expect(filesUnder(dir)).toEqual(mine.map((f) => f.path).sort());
        for (const f of mine) expect(f.content, `${machine.hostname}${f.path}`).toBe(readFileSync(join(dir, f.path), 'utf8'));
        const plain = renderMachine(without, machine, opts);
        const others = (fs: typeof files) => fs.filter((f) => !f.path.startsWith('/etc/containerd/')).map((f) => [f.path, f.content]);
        expect(others(files)).toEqual(others(plain));
      });
    }

    it('sets config_path in the schema of that containerd, and only when registries is set', () => {
      const node0 = withRegistries.machines.find((m) => m.hostname === 'node-0')!;
      const config = (inv: typeof without) => readToml(renderMachine(inv, node0, opts).find((f) => f.path === '/etc/containerd/config.toml')!.content);
      expect(at(config(withRegistries), 'plugins', containerd.config, 'registry', 'config_path')).toBe('/etc/containerd/certs.d');
      expect(at(config(without), 'plugins', containerd.config, 'registry')).toBeUndefined();
    });
  });
}

describe('the registries golden files show containerd\'s hosts.toml rules', () => {
  const golden = (path: string) => readFileSync(join(GOLDEN, 'containerd-2.0/node-1', path), 'utf8');
  it('a registry with a port gets host_port_, the first directory containerd looks up', () => {
    expect(readToml(golden('etc/containerd/certs.d/localhost_5001_/hosts.toml'))).toEqual({
      server: 'http://localhost:5001',
      host: { 'http://registry:5000': { capabilities: ['pull', 'resolve'] } },
    });
  });
  it('docker.io falls back to registry-1.docker.io; the CA goes beside hosts.toml; mirrors keep their order', () => {
    const text = golden('etc/containerd/certs.d/docker.io/hosts.toml');
    expect(readToml(text)).toEqual({
      server: 'https://registry-1.docker.io',
      host: {
        'https://mirror.example.com:5443': { capabilities: ['pull'], ca: '/etc/containerd/certs.d/docker.io/mirror-1-ca.crt' },
        'https://10.240.0.5:5000': { capabilities: ['pull', 'resolve'], skip_verify: true },
      },
    });
    expect(text.indexOf('mirror.example.com')).toBeLessThan(text.indexOf('10.240.0.5'));
    expect(golden('etc/containerd/certs.d/docker.io/mirror-1-ca.crt')).toBe(readFileSync(join(FIXTURE, 'mirror-ca.crt'), 'utf8'));
  });
  it('_default has no server: each image\'s own registry stays the upstream', () => {
    expect(readToml(golden('etc/containerd/certs.d/_default/hosts.toml'))).toEqual({ host: { 'https://cache.example.com': { capabilities: ['pull', 'resolve'] } } });
  });
  it('every hosts.toml starts with the marker that makes its directory hardway\'s', () => {
    for (const dir of ['localhost_5001_', 'docker.io', '_default']) {
      expect(golden(`etc/containerd/certs.d/${dir}/hosts.toml`).startsWith('# Managed by hardway')).toBe(true);
    }
  });
});
