// Golden files: every file rendered for the example machines.txt (server, node-0, node-1), byte for
// byte, under test/golden/<hostname>/<path on the machine>. After an intended change, regenerate
// them with `UPDATE_GOLDEN=1 npx vitest run test/unit/render-golden.test.ts` and review the diff.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { defaultSettings } from '../../src/cluster-settings.ts';
import { parseInventory } from '../../src/inventory.ts';
import { renderMachine } from '../../src/render/machine.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const GOLDEN = join(ROOT, 'test/golden');
const UPDATE = process.env.UPDATE_GOLDEN === '1';

// The repository's example inventory with default settings (a local cluster.yaml must not leak in).
const machinesFile = join(ROOT, 'machines.txt');
const inv = parseInventory(readFileSync(machinesFile, 'utf8'), defaultSettings(), {
  file: machinesFile,
  dir: ROOT,
  clusterFile: join(ROOT, 'cluster.yaml'),
});

function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => '/' + relative(dir, join(e.parentPath, e.name)))
    .sort();
}

describe('golden files for the example machines.txt', () => {
  it('covers server, node-0 and node-1', () => {
    expect(inv.machines.map((m) => m.hostname)).toEqual(['server', 'node-0', 'node-1']);
  });

  for (const machine of inv.machines) {
    it(`${machine.hostname}: every rendered file equals its golden file, and no golden file is stale`, () => {
      const dir = join(GOLDEN, machine.hostname);
      const files = renderMachine(inv, machine);
      if (UPDATE) {
        rmSync(dir, { recursive: true, force: true });
        for (const f of files) {
          mkdirSync(dirname(join(dir, f.path)), { recursive: true });
          writeFileSync(join(dir, f.path), f.content);
        }
      }
      expect(filesUnder(dir)).toEqual(files.map((f) => f.path).sort());
      for (const f of files) {
        expect(f.content, `${machine.hostname}${f.path}`).toBe(readFileSync(join(dir, f.path), 'utf8'));
      }
    });
  }

  it('shows each worker its own pod subnet in the CNI and kubelet configs', () => {
    const golden = (host: string, path: string) => readFileSync(join(GOLDEN, host, path), 'utf8');
    expect(golden('node-0', 'etc/cni/net.d/10-bridge.conf')).toContain('"subnet": "10.200.0.0/24"');
    expect(golden('node-0', 'var/lib/kubelet/kubelet-config.yaml')).toContain('podCIDR: "10.200.0.0/24"');
    expect(golden('node-1', 'etc/cni/net.d/10-bridge.conf')).toContain('"subnet": "10.200.1.0/24"');
    expect(golden('node-1', 'var/lib/kubelet/kubelet-config.yaml')).toContain('podCIDR: "10.200.1.0/24"');
  });
});
