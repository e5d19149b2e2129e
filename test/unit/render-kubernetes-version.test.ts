// Files that fit the Kubernetes release being installed: which release (downloads/ first, then
// cluster.yaml), the supported range, and each difference between releases at its boundary.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { defaultSettings, type ClusterSettings } from '../../src/cluster-settings.ts';
import { InputError } from '../../src/errors.ts';
import { parseInventory } from '../../src/inventory.ts';
import { ANY, SERVER, WORKER } from '../../src/layout.ts';
import {
  kubernetesDifferences,
  parseKubernetesVersion,
  SUPPORTED_KUBERNETES,
  supportedKubernetes,
} from '../../src/render/kubernetes-version.ts';
import { renderMachine, type RenderOptions } from '../../src/render/machine.ts';
import { kubernetesToRender } from '../../src/steps/support/kubernetes-version.ts';
import { DEBIAN_OS_RELEASE } from '../fixtures/fake-transport.ts';
import { fakeCluster, inventoryOf, projectDir, runCommand } from './engine.helpers.ts';
import { at, EXAMPLE, execFlags, file, host, inventory, readToml } from './render-fixtures.ts';

const inv = inventory(EXAMPLE);
const render = (machine: string, version: string, opts: RenderOptions = {}, i = inv) =>
  renderMachine(i, host(i, machine), { kubernetes: { version, from: 'the test' }, ...opts });
const thrown = (fn: () => unknown): unknown => {
  try {
    fn();
  } catch (e) {
    return e;
  }
  throw new Error('did not throw');
};

describe('the supported Kubernetes releases', () => {
  it('are 1.20 to 1.32, with golden files for 1.20 and 1.32', () => {
    expect(SUPPORTED_KUBERNETES).toEqual({ major: 1, firstMinor: 20, lastMinor: 32, goldenMinors: [20, 32] });
    expect(supportedKubernetes('v1.20.0', 'x')).toEqual({ version: 'v1.20.0', major: 1, minor: 20 });
    expect(supportedKubernetes('v1.32.3', 'x').minor).toBe(32);
    expect(supportedKubernetes('1.26.1', 'x').version).toBe('v1.26.1');
  });

  it('reads release, plain and Debian versions (the release after +really)', () => {
    expect(parseKubernetesVersion('v1.32.3')).toEqual({ version: 'v1.32.3', major: 1, minor: 32 });
    expect(parseKubernetesVersion('1.20.5+really1.20.2-1.1')).toEqual({ version: 'v1.20.2', major: 1, minor: 20 });
    expect(parseKubernetesVersion('latest')).toBeUndefined();
  });

  it('an unsupported release is an InputError (exit 2) naming it, where it came from, and the range', () => {
    for (const v of ['v1.19.16', 'v1.33.0', 'v2.0.0', 'latest']) {
      const e = thrown(() => supportedKubernetes(v, 'downloads/manifest.json'));
      expect(e).toBeInstanceOf(InputError);
      expect((e as InputError).exitCode).toBe(2);
      expect((e as Error).message).toBe(`Kubernetes "${v}" (from downloads/manifest.json) is not supported: hardway renders for Kubernetes 1.20 to 1.32`);
    }
  });

  it('is checked before anything is rendered, for every machine', () => {
    for (const m of ['server', 'node-0']) {
      expect(() => render(m, 'v1.19.16')).toThrow(/Kubernetes "v1\.19\.16" \(from the test\) is not supported: .* 1\.20 to 1\.32/);
    }
    const old = inventory(EXAMPLE, { versions: { ...defaultSettings().versions, kubernetes: 'v1.18.20' } });
    expect(() => renderMachine(old, host(old, 'server'))).toThrow(/"v1\.18\.20" \(from versions\.kubernetes in cluster\.yaml\)/);
  });
});

describe('differences between releases, at each boundary', () => {
  it('kube-scheduler config: v1beta1 up to 1.21, v1beta2 for 1.22-1.24, v1 from 1.25', () => {
    const cases = { 20: 'v1beta1', 21: 'v1beta1', 22: 'v1beta2', 24: 'v1beta2', 25: 'v1', 32: 'v1' } as const;
    for (const [minor, version] of Object.entries(cases)) {
      expect(kubernetesDifferences({ minor: Number(minor) }).schedulerConfigVersion).toBe(version);
      const cfg = parseYaml(file(render('server', `v1.${minor}.0`), SERVER.schedulerConfig).content);
      expect(cfg).toEqual({
        apiVersion: `kubescheduler.config.k8s.io/${version}`,
        kind: 'KubeSchedulerConfiguration',
        clientConnection: { kubeconfig: SERVER.schedulerKubeconfig },
        leaderElection: { leaderElect: true },
      });
    }
  });

  it('kubelet: runtime flags in the unit before 1.27 (no config field), the config field from 1.27 (no flags)', () => {
    const endpoint = 'unix:///var/run/containerd/containerd.sock';
    for (const minor of [20, 26]) {
      const files = render('node-0', `v1.${minor}.1`);
      expect(execFlags(file(files, `${ANY.units}/kubelet.service`).content)).toEqual([
        `--config=${WORKER.kubeletConfig}`, '--container-runtime=remote', `--container-runtime-endpoint=${endpoint}`,
        `--kubeconfig=${WORKER.kubeletKubeconfig}`, '--v=2',
      ]);
      expect(parseYaml(file(files, WORKER.kubeletConfig).content)).not.toHaveProperty('containerRuntimeEndpoint');
    }
    for (const minor of [27, 32]) {
      const files = render('node-0', `v1.${minor}.0`);
      expect(execFlags(file(files, `${ANY.units}/kubelet.service`).content)).toEqual([
        `--config=${WORKER.kubeletConfig}`, `--kubeconfig=${WORKER.kubeletKubeconfig}`, '--v=2',
      ]);
      expect(parseYaml(file(files, WORKER.kubeletConfig).content).containerRuntimeEndpoint).toBe(endpoint);
    }
  });

  it('kubelet config: registerNode only from 1.23 (older kubelets do not know the field; their default is the same)', () => {
    expect(parseYaml(file(render('node-1', 'v1.22.17'), WORKER.kubeletConfig).content)).not.toHaveProperty('registerNode');
    expect(parseYaml(file(render('node-1', 'v1.23.0'), WORKER.kubeletConfig).content).registerNode).toBe(true);
  });

  it('without options, the release is settings.versions.kubernetes', () => {
    const v120 = inventory(EXAMPLE, { versions: { ...defaultSettings().versions, kubernetes: 'v1.20.2' } });
    expect(file(renderMachine(v120, host(v120, 'server')), SERVER.schedulerConfig).content).toContain('kubescheduler.config.k8s.io/v1beta1\n');
    expect(file(renderMachine(inv, host(inv, 'server')), SERVER.schedulerConfig).content).toContain('kubescheduler.config.k8s.io/v1\n');
  });
});

describe('kubernetesToRender: the release of the server binaries in downloads/, else cluster.yaml', () => {
  const dirs: string[] = [];
  afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
  const project = (files: Record<string, string> | undefined, settings: Partial<ClusterSettings> = {}) => {
    const dir = mkdtempSync(join(tmpdir(), 'hardway-k8s-version-'));
    dirs.push(dir);
    if (files) {
      mkdirSync(join(dir, 'downloads'));
      writeFileSync(join(dir, 'downloads/manifest.json'), JSON.stringify({
        schema: 1, source: 'debian', arch: 'amd64', missing: [],
        files: Object.entries(files).map(([path, version]) => ({ path, sha256: '0'.repeat(64), component: 'kubernetes', version, source: { kind: 'release' } })),
      }));
    }
    return parseInventory(EXAMPLE, { ...defaultSettings(), ...settings }, { file: join(dir, 'machines.txt'), dir, clusterFile: join(dir, 'cluster.yaml') });
  };
  const built = (version: string) => ({
    'controller/kube-apiserver': version, 'controller/kube-controller-manager': version, 'controller/kube-scheduler': version,
    'worker/kubelet': version, 'worker/kube-proxy': version,
  });

  it('takes the server binaries\' version, not kubectl\'s', () => {
    const i = project({ 'client/kubectl': 'v1.32.3', ...built('v1.20.2') });
    expect(kubernetesToRender(i)).toEqual({ version: 'v1.20.2', from: 'downloads/manifest.json' });
    expect(kubernetesToRender(project({ 'client/kubectl': '1.20.5+really1.20.2-1.1', 'worker/kubelet': 'v1.20.2' })).version).toBe('v1.20.2');
  });

  it('falls back to versions.kubernetes when downloads/ has no server binary (none at all, or only kubectl)', () => {
    // No cluster.yaml in these projects: the default is not said to come from one.
    const fallback = { version: 'v1.32.3', from: "hardway's default versions.kubernetes; there is no cluster.yaml" };
    expect(kubernetesToRender(project(undefined))).toEqual(fallback);
    expect(kubernetesToRender(project({ 'client/kubectl': '1.20.5+really1.20.2-1.1' }))).toEqual(fallback);
    const pinned = project(undefined, { versions: { ...defaultSettings().versions, kubernetes: 'v1.24.17' } });
    expect(kubernetesToRender(pinned)).toEqual({ version: 'v1.24.17', from: 'versions.kubernetes in cluster.yaml' });
  });

  it('cites cluster.yaml only when it sets versions.kubernetes (a cluster.yaml without the key is not the source)', () => {
    const unset = project(undefined);
    writeFileSync(join(unset.dir, 'cluster.yaml'), 'keyAlgorithm: ecdsa-p256\nversions:\n  containerd: 1.7.24\n');
    expect(kubernetesToRender(unset)).toEqual({ version: 'v1.32.3', from: "hardway's default versions.kubernetes; cluster.yaml does not set it" });
    const set = project(undefined);
    writeFileSync(join(set.dir, 'cluster.yaml'), 'versions:\n  kubernetes: v1.32.3\n');
    expect(kubernetesToRender(set)).toEqual({ version: 'v1.32.3', from: 'versions.kubernetes in cluster.yaml' });
  });

  it('refuses server binaries of an unsupported release, or of several releases, naming them', () => {
    const old = thrown(() => kubernetesToRender(project(built('v1.19.16'))));
    expect(old).toBeInstanceOf(InputError);
    expect((old as Error).message).toMatch(/^Kubernetes "v1\.19\.16" \(from downloads\/manifest\.json\) is not supported: .*1\.20 to 1\.32$/);
    const mixed = thrown(() => kubernetesToRender(project({ ...built('v1.32.3'), 'worker/kubelet': 'v1.20.2' })));
    expect(mixed).toBeInstanceOf(InputError);
    expect((mixed as Error).message).toContain('different releases: kube-apiserver v1.32.3, kube-controller-manager v1.32.3, kube-scheduler v1.32.3, kubelet v1.20.2, kube-proxy v1.32.3');
    const unsupportedSetting = project(undefined, { versions: { ...defaultSettings().versions, kubernetes: 'v1.33.0' } });
    expect(() => kubernetesToRender(unsupportedSetting)).toThrow(/"v1\.33\.0" \(from versions\.kubernetes in cluster\.yaml\)/);
  });
});

describe('cluster.yaml keys for hosts that restrict the kubelet', () => {
  const node0 = (settings: Partial<ClusterSettings>, containerdMajor: number, containerdMinor = 0) => {
    const i = inventory(EXAMPLE, settings);
    return render('node-0', 'v1.32.3', { containerdMajor, containerdMinor }, i);
  };
  const lab = { sandboxImage: 'registry.k8s.io/pause:3.6', containerd: { restrictOomScoreAdj: true } };

  it('containerd 1.x (schema 2): sandbox_image and restrict_oom_score_adj in the CRI plugin section', () => {
    const cri = at(readToml(file(node0(lab, 1, 6), WORKER.containerdConfig).content), 'plugins', 'io.containerd.grpc.v1.cri');
    expect(at(cri, 'sandbox_image')).toBe('registry.k8s.io/pause:3.6');
    expect(at(cri, 'restrict_oom_score_adj')).toBe(true);
    expect(at(cri, 'containerd', 'snapshotter')).toBe('overlayfs');
    const onlyImage = at(readToml(file(node0({ sandboxImage: 'localhost:5000/pause:3.6' }, 1, 6), WORKER.containerdConfig).content), 'plugins', 'io.containerd.grpc.v1.cri');
    expect(at(onlyImage, 'sandbox_image')).toBe('localhost:5000/pause:3.6');
    expect(at(onlyImage, 'restrict_oom_score_adj')).toBeUndefined();
  });

  it('containerd 2.x (schema 3): the pinned sandbox image and restrict_oom_score_adj in the CRI runtime plugin', () => {
    for (const minor of [0, 1]) {
      const toml = readToml(file(node0(lab, 2, minor), WORKER.containerdConfig).content);
      expect(at(toml, 'plugins', 'io.containerd.cri.v1.images', 'pinned_images', 'sandbox')).toBe('registry.k8s.io/pause:3.6');
      expect(at(toml, 'plugins', 'io.containerd.cri.v1.images', 'snapshotter')).toBe('overlayfs');
      expect(at(toml, 'plugins', 'io.containerd.cri.v1.runtime', 'restrict_oom_score_adj')).toBe(true);
      expect(at(toml, 'plugins', 'io.containerd.cri.v1.runtime', 'containerd', 'default_runtime_name')).toBe('runc');
      expect(at(toml, 'plugins', 'io.containerd.grpc.v1.cri')).toBeUndefined();
    }
  });

  it('unset, containerd keeps its defaults: neither key is written, in either schema', () => {
    for (const major of [1, 2]) {
      const text = file(node0({}, major, 6), WORKER.containerdConfig).content;
      expect(text).not.toMatch(/sandbox|restrict_oom_score_adj|grpc\.v1\.cri"\]/);
    }
  });

  it('kube-proxy: conntrack.maxPerCore when set (0 included), nothing when unset', () => {
    const proxy = (settings: Partial<ClusterSettings>) =>
      parseYaml(file(render('node-1', 'v1.20.2', {}, inventory(EXAMPLE, settings)), WORKER.kubeProxyConfig).content);
    expect(proxy({ kubeProxy: { conntrackMaxPerCore: 0 } }).conntrack).toEqual({ maxPerCore: 0 });
    expect(proxy({ kubeProxy: { conntrackMaxPerCore: 32768 } }).conntrack).toEqual({ maxPerCore: 32768 });
    expect(proxy({})).not.toHaveProperty('conntrack');
  });
});

describe('remote commands check the release before touching any machine', () => {
  const simple = (h: string) => ({ tools: [], files: { '/etc/hosts': '127.0.0.1 localhost\n', '/etc/hostname': `${h}\n`, '/etc/os-release': DEBIAN_OS_RELEASE } });

  it('an unsupported release is exit 2 with the message, and no machine ran a command', async () => {
    const dir = projectDir();
    writeFileSync(join(dir, 'cluster.yaml'), 'versions:\n  kubernetes: v1.19.16\n');
    const fakes = fakeCluster(inventoryOf(), simple);
    const r = await runCommand('up', ['--json'], dir, fakes);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('Kubernetes "v1.19.16" (from versions.kubernetes in cluster.yaml) is not supported: hardway renders for Kubernetes 1.20 to 1.32');
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: false, results: [] });
    for (const f of fakes.values()) expect(f.commands).toEqual([]);
    rmSync(dir, { recursive: true, force: true });
  });

  it('an unreadable downloads/manifest.json is left to the steps that read it: pin-hosts still runs', async () => {
    const dir = projectDir();
    mkdirSync(join(dir, 'downloads'));
    writeFileSync(join(dir, 'downloads/manifest.json'), '{ not json');
    const r = await runCommand('pin-hosts', ['--json'], dir, fakeCluster(inventoryOf(), simple));
    expect(r.code, r.stderr).toBe(0);
    rmSync(dir, { recursive: true, force: true });
  });
});
