// Golden files: every file rendered for the example machines.txt (server, node-0, node-1), byte for
// byte, per supported Kubernetes release (and test/golden-ha/ for three control planes): test/golden/<hostname>/<path on the machine> for today's
// default (v1.32, checked against upstream line by line), test/golden-v1.20/... for v1.20.2 as the
// lab builds it (server binaries from Debian's source package, Debian's containerd 1.6, and the
// cluster.yaml keys of test/fixtures/kubernetes-v1.20). After an intended change, regenerate them
// with `UPDATE_GOLDEN=1 npx vitest run test/unit/render-golden.test.ts` and review the diff.
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { defaultSettings, loadClusterSettings } from '../../src/cluster-settings.ts';
import { parseInventory, type Inventory } from '../../src/inventory.ts';
import { SUPPORTED_KUBERNETES } from '../../src/render/kubernetes-version.ts';
import { renderMachine, type RenderOptions } from '../../src/render/machine.ts';
import { kubernetesToRender } from '../../src/steps/support/kubernetes-version.ts';
import { containerdRenderOptions } from '../../src/steps/support/worker-render.ts';
import { dnsObjects } from '../../src/dns/manifest.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const UPDATE = process.env.UPDATE_GOLDEN === '1';
const machinesFile = join(ROOT, 'examples/machines.txt');
const V120 = join(ROOT, 'test/fixtures/kubernetes-v1.20');

// v1.20's project: the fixture downloads/manifest.json in a directory of its own (downloads/ is
// git-ignored, so the fixture keeps it as a plain file).
const v120Project = mkdtempSync(join(tmpdir(), 'hardway-golden-v1.20-'));
mkdirSync(join(v120Project, 'downloads'));
copyFileSync(join(V120, 'manifest.json'), join(v120Project, 'downloads/manifest.json'));
afterAll(() => rmSync(v120Project, { recursive: true, force: true }));

function exampleInventory(dir: string, settings = defaultSettings(), file = machinesFile): Inventory {
  return parseInventory(readFileSync(file, 'utf8'), settings, { file, dir, clusterFile: join(dir, 'cluster.yaml') });
}

interface GoldenSet {
  minor: number;
  golden: string;
  inv: Inventory;
  /** The machines it covers, in machines.txt order. */
  hosts: string[];
  /** What `hardway render` would pass (the default set passes nothing: the repository's own downloads/ must not leak in). */
  opts: () => RenderOptions;
}
const v120Inv = exampleInventory(v120Project, loadClusterSettings(join(V120, 'cluster.yaml')));
const SETS: GoldenSet[] = [
  // The repository's example inventory with default settings (a local cluster.yaml must not leak in).
  { minor: 32, golden: join(ROOT, 'test/golden'), inv: exampleInventory(ROOT), hosts: ['server', 'node-0', 'node-1'], opts: () => ({}) },
  { minor: 20, golden: join(ROOT, 'test/golden-v1.20'), inv: v120Inv, hosts: ['server', 'node-0', 'node-1'], opts: () => ({ ...containerdRenderOptions(v120Inv), kubernetes: kubernetesToRender(v120Inv) }) },
];

// Three control planes (test/fixtures/ha/machines.txt), as the lab names them, for v1.20.2 as the
// lab builds it: etcd's initial cluster of three, each API server with every etcd member, and the
// node-local haproxy on each worker.
const haInv = exampleInventory(v120Project, loadClusterSettings(join(V120, 'cluster.yaml')), join(ROOT, 'test/fixtures/ha/machines.txt'));
const HA_SET: GoldenSet = {
  minor: 20, golden: join(ROOT, 'test/golden-ha'), inv: haInv, hosts: ['server-0', 'server-1', 'server-2', 'node-0', 'node-1'],
  opts: () => ({ ...containerdRenderOptions(haInv), kubernetes: kubernetesToRender(haInv) }),
};

function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => '/' + relative(dir, join(e.parentPath, e.name)))
    .sort();
}

it('there is a golden set for each minor SUPPORTED_KUBERNETES says has one', () => {
  expect(SETS.map((s) => s.minor).sort()).toEqual([...SUPPORTED_KUBERNETES.goldenMinors].sort());
});

for (const set of [...SETS, HA_SET]) {
  describe(`golden files for ${relative(ROOT, set.inv.machinesFile)}, Kubernetes 1.${set.minor} (${relative(ROOT, set.golden)})`, () => {
    it(`covers ${set.hosts.join(', ')}`, () => {
      expect(set.inv.machines.map((m) => m.hostname)).toEqual(set.hosts);
    });

    for (const machine of set.inv.machines) {
      it(`${machine.hostname}: every rendered file equals its golden file, and no golden file is stale`, () => {
        const dir = join(set.golden, machine.hostname);
        const files = renderMachine(set.inv, machine, set.opts());
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

    it('cluster objects: the DNS add-on (cluster/coredns.yaml) equals its golden file', () => {
      const file = join(set.golden, 'cluster/coredns.yaml');
      const text = dnsObjects(set.inv, set.minor).map((o) => o.yaml).join('');
      if (UPDATE) {
        mkdirSync(dirname(file), { recursive: true });
        writeFileSync(file, text);
      }
      expect(text).toBe(readFileSync(file, 'utf8'));
    });

    it('shows each worker its own pod subnet in the CNI and kubelet configs', () => {
      const golden = (host: string, path: string) => readFileSync(join(set.golden, host, path), 'utf8');
      expect(golden('node-0', 'etc/cni/net.d/10-bridge.conf')).toContain('"subnet": "10.200.0.0/24"');
      expect(golden('node-0', 'var/lib/kubelet/kubelet-config.yaml')).toContain('podCIDR: "10.200.0.0/24"');
      expect(golden('node-1', 'etc/cni/net.d/10-bridge.conf')).toContain('"subnet": "10.200.1.0/24"');
      expect(golden('node-1', 'var/lib/kubelet/kubelet-config.yaml')).toContain('podCIDR: "10.200.1.0/24"');
    });
  });
}

describe('the v1.20 golden set is rendered as the lab renders it', () => {
  it('takes v1.20.2 from the server binaries of downloads/manifest.json, and containerd 1.6 from it too', () => {
    expect(kubernetesToRender(v120Inv)).toEqual({ version: 'v1.20.2', from: 'downloads/manifest.json' });
    expect(containerdRenderOptions(v120Inv)).toEqual({ containerdMajor: 1, containerdMinor: 6 });
  });

  it('carries the lab\'s cluster.yaml keys', () => {
    expect(v120Inv.settings).toMatchObject({
      sandboxImage: 'registry.k8s.io/pause:3.6',
      containerd: { restrictOomScoreAdj: true },
      kubeProxy: { conntrackMaxPerCore: 0 },
    });
  });
});

describe('the three-control-plane golden set (test/golden-ha) shows what several control planes change', () => {
  const golden = (host: string, path: string) => readFileSync(join(HA_SET.golden, host, path), 'utf8');
  const apiServers = ['server-0 10.240.0.10:6443', 'server-1 10.240.0.11:6443', 'server-2 10.240.0.12:6443'];

  it('every worker runs a haproxy on 127.0.0.1:6443 in TCP mode over every API server, health-checked over TLS', () => {
    for (const node of ['node-0', 'node-1']) {
      const cfg = golden(node, 'etc/haproxy/hardway-api-proxy.cfg');
      expect(cfg).toMatch(/^ {2}bind 127\.0\.0\.1:6443$/m);
      expect(cfg).toMatch(/^ {2}mode tcp$/m);
      expect(cfg).toMatch(/^ {2}option httpchk GET \/readyz$/m);
      expect(cfg).toContain('check-ssl verify required ca-file /var/lib/kubelet/ca.crt');
      expect(cfg.match(/^ {2}server .*$/gm)).toEqual(apiServers.map((s) => `  server ${s}`));
    }
    // One control plane: no proxy anywhere.
    for (const set of SETS) expect(existsSync(join(set.golden, 'node-0/etc/haproxy'))).toBe(false);
  });

  it('etcd on each control plane starts one cluster of all three, and each API server lists every member, its own first', () => {
    for (const [i, host] of ['server-0', 'server-1', 'server-2'].entries()) {
      expect(golden(host, 'etc/systemd/system/etcd.service')).toContain(
        '--initial-cluster=server-0=https://10.240.0.10:2380,server-1=https://10.240.0.11:2380,server-2=https://10.240.0.12:2380');
      const others = [0, 1, 2].filter((j) => j !== i).map((j) => `https://10.240.0.1${j}:2379`);
      expect(golden(host, 'etc/systemd/system/kube-apiserver.service')).toContain(`--etcd-servers=${['https://127.0.0.1:2379', ...others].join(',')}`);
      expect(golden(host, 'etc/systemd/system/kube-controller-manager.service')).toContain('--leader-elect=true');
      expect(golden(host, 'etc/kubernetes/config/kube-scheduler.yaml')).toMatch(/leaderElection:\n {2}leaderElect: true/);
    }
  });

  it('the hosts block pins api.kubernetes.local to every control plane, after the machines', () => {
    expect(golden('node-0', 'etc/hosts.hardway-block').split('\n').filter((l) => l.endsWith(' api.kubernetes.local')))
      .toEqual(['10.240.0.10 api.kubernetes.local', '10.240.0.11 api.kubernetes.local', '10.240.0.12 api.kubernetes.local']);
  });
});
