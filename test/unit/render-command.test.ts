// `hardway render` through main(): the tree it writes, --node selection, and its usage errors.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';

const MACHINES = `# test cluster
10.240.0.10 server.kubernetes.local server
10.240.0.20 node-0.kubernetes.local node-0 10.200.0.0/24
10.240.0.21 node-1.kubernetes.local node-1 10.200.1.0/24
10.240.0.22 node-10.kubernetes.local node-10 10.200.10.0/24
`;
let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'hardway-render-cmd-'));
  writeFileSync(join(dir, 'machines.txt'), MACHINES);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const tree = (root: string) =>
  readdirSync(root, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => relative(root, join(e.parentPath, e.name)))
    .sort();

describe('hardway render', () => {
  it('writes every machine\'s files at their paths on the machine, with their modes, and says how many', async () => {
    const run = await runCli(['render', '--out', 'out'], dir);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(readdirSync(join(dir, 'out')).sort()).toEqual(['node-0', 'node-1', 'node-10', 'server']);
    const lines = run.stdout.trim().split('\n');
    expect(lines).toHaveLength(5);
    // No cluster.yaml in this project: the version is hardway's default, and says so.
    expect(lines[0]).toBe("Kubernetes v1.32.3 (from hardway's default versions.kubernetes; there is no cluster.yaml)");
    for (const host of ['server', 'node-0', 'node-1', 'node-10']) {
      const files = tree(join(dir, 'out', host));
      expect(lines).toContain(`${host}: ${files.length} files in ${join(dir, 'out', host)}`);
    }
    const node1 = join(dir, 'out/node-1');
    expect(tree(node1)).toEqual(expect.arrayContaining([
      'etc/hosts.hardway-block',
      'etc/cloud/templates/hosts.debian.tmpl.hardway-block',
      'etc/cni/net.d/10-bridge.conf',
      'etc/systemd/system/kubelet.service',
      'var/lib/kubelet/kubelet-config.yaml',
    ]));
    expect(readFileSync(join(node1, 'etc/cni/net.d/10-bridge.conf'), 'utf8')).toContain('"subnet": "10.200.1.0/24"');
    expect(statSync(join(node1, 'etc/systemd/system/kubelet.service')).mode & 0o777).toBe(0o644);
    expect(tree(join(dir, 'out/server'))).toContain('etc/systemd/system/etcd.service');
  });

  it('--node is exact (node-1 is not node-10) and repeatable', async () => {
    const one = await runCli(['render', '--node', 'node-1', '--out', 'one'], dir);
    expect(one.code).toBe(0);
    expect(readdirSync(join(dir, 'one'))).toEqual(['node-1']);
    const two = await runCli(['render', '--node', 'node-10', '--node', 'server', '--out', 'two'], dir);
    expect(two.code).toBe(0);
    expect(readdirSync(join(dir, 'two')).sort()).toEqual(['node-10', 'server']);
  });

  it('an unknown --node is a usage error (exit 2) that lists the known machines and writes nothing', async () => {
    const run = await runCli(['render', '--node', 'node-2', '--out', 'bad'], dir);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('no machine named "node-2"');
    expect(run.stderr).toContain('server, node-0, node-1, node-10');
    expect(readdirSync(dir)).not.toContain('bad');
  });

  it('writes the containerd config schema of the containerd in downloads/, as bootstrap-workers installs it', async () => {
    const project = mkdtempSync(join(tmpdir(), 'hardway-render-ctrd-'));
    writeFileSync(join(project, 'machines.txt'), MACHINES);
    const config = async () => {
      const run = await runCli(['render', '--node', 'node-0', '--out', 'out'], project);
      expect(run.code, run.stderr).toBe(0);
      return readFileSync(join(project, 'out/node-0/etc/containerd/config.toml'), 'utf8');
    };
    // Without downloads/, the version of cluster.yaml (v2.x by default): schema 3.
    expect(await config()).toMatch(/^version = 3$/m);
    mkdirSync(join(project, 'downloads/worker'), { recursive: true });
    writeFileSync(join(project, 'downloads/manifest.json'), JSON.stringify({
      schema: 1, source: 'debian', arch: 'amd64', missing: [],
      files: [{ path: 'worker/containerd', sha256: '0'.repeat(64), component: 'containerd', version: '1.6.20~ds1-1+deb12u3',
        source: { kind: 'debian', package: 'containerd', packageVersion: '1.6.20~ds1-1+deb12u3', arch: 'amd64', debSha256: '0'.repeat(64), debFile: 'x.deb' } }],
    }));
    expect(await config()).toMatch(/^version = 2$/m);
    rmSync(project, { recursive: true, force: true });
  });

  it('renders for the Kubernetes release of the server binaries in downloads/, and says so; refuses an unsupported one', async () => {
    const project = mkdtempSync(join(tmpdir(), 'hardway-render-k8s-'));
    writeFileSync(join(project, 'machines.txt'), MACHINES);
    mkdirSync(join(project, 'downloads'), { recursive: true });
    const manifest = (version: string) => writeFileSync(join(project, 'downloads/manifest.json'), JSON.stringify({
      schema: 1, source: 'debian', arch: 'amd64', missing: [],
      files: ['controller/kube-apiserver', 'controller/kube-scheduler', 'worker/kubelet', 'client/kubectl'].map((path) => ({
        path, sha256: '0'.repeat(64), component: 'kubernetes', version: path === 'client/kubectl' ? '1.20.5+really1.20.2-1.1' : version,
        source: { kind: 'debian-source', package: 'kubernetes', packageVersion: '1.20.5+really1.20.2-1.1', dscSha256: '0'.repeat(64), builtWith: 'go1.19.8' },
      })),
    }));
    manifest('v1.20.2');
    const run = await runCli(['render', '--out', 'out'], project);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout.split('\n')[0]).toBe('Kubernetes v1.20.2 (from downloads/manifest.json)');
    expect(readFileSync(join(project, 'out/server/etc/kubernetes/config/kube-scheduler.yaml'), 'utf8')).toContain('kubescheduler.config.k8s.io/v1beta1\n');
    expect(readFileSync(join(project, 'out/node-0/etc/systemd/system/kubelet.service'), 'utf8')).toContain('--container-runtime=remote');
    manifest('v1.19.16');
    const bad = await runCli(['render', '--out', 'bad'], project);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('Kubernetes "v1.19.16" (from downloads/manifest.json) is not supported: hardway renders for Kubernetes 1.20 to 1.32');
    expect(readdirSync(project)).not.toContain('bad');
    rmSync(project, { recursive: true, force: true });
  });

  it('without --out it exits 2 with a hint', async () => {
    const run = await runCli(['render'], dir);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/--out OUT is required\n\s+hint: .*hardway render --out/);
  });

  it('--help says the hosts blocks are merged by pin-hosts, not installed', async () => {
    const run = await runCli(['render', '--help'], dir);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('hosts.hardway-block');
    expect(run.stdout).toMatch(/pin-hosts step merges into \/etc\/hosts/);
  });
});
