// `hardway download --source debian` for real: apt-get download from Debian's mirror (the only
// network this test uses), dpkg -x, and the binaries run; the Kubernetes server binaries built
// from Debian's kubernetes source package (minutes the first time on a fresh machine, then taken
// from the user's cache). The .debs are cached in ${XDG_CACHE_HOME:-~/.cache}/hardway/downloads.
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, openSync, readdirSync, readFileSync, readSync, closeSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';
import { cacheDir } from '../../src/download/cache.ts';
import { DEBIAN_PACKAGES, downloadFromDebian } from '../../src/download/debian.ts';
import { readDownloads } from '../../src/download/layout.ts';

const work = mkdtempSync(join(tmpdir(), 'hardway-debian-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
const native = execFileSync('dpkg', ['--print-architecture'], { encoding: 'utf8' }).trim();
const cache = cacheDir(process.env);
/** apt options of hardway's private deb-src index (src/download/apt-source.ts), to read the same index. */
const srcRoot = join(cache, '..', 'apt-source');
const PRIVATE_SRC = ['-o', `Dir::Etc::SourceList=${srcRoot}/sources.list`, '-o', 'Dir::Etc::SourceParts=/dev/null', '-o', `Dir::State::Lists=${srcRoot}/lists`,
  '-o', `Dir::Cache=${srcRoot}/cache`, '-o', 'Dir::Cache::pkgcache=', '-o', 'Dir::Cache::srcpkgcache='];

async function run(project: string, args: string[]) {
  const r = await runCli(['download', ...args], project, process.env);
  return { code: r.code, out: r.stdout, err: r.stderr };
}

/** ELF e_machine: 0x3e x86-64, 0xb7 aarch64. */
function elfMachine(path: string): number {
  const fd = openSync(path, 'r');
  const b = Buffer.alloc(20);
  readSync(fd, b, 0, 20, 0);
  closeSync(fd);
  expect(b.subarray(0, 4).toString('latin1')).toBe('\x7fELF');
  return b.readUInt16LE(18);
}

describe('hardway download --source debian', () => {
  const project = mkdtempSync(join(work, 'project-'));

  it('extracts what Debian packages carry, verified against the apt index, builds the server binaries, and lists what is missing', async () => {
    const r = await run(project, ['--source', 'debian']);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    const d = (p: string) => join(project, 'downloads', p);
    for (const p of ['controller/etcd', 'client/etcdctl', 'client/kubectl', 'worker/containerd', 'worker/containerd-shim-runc-v2', 'worker/ctr', 'worker/runc', 'cni-plugins/bridge', 'cni-plugins/host-local', 'cni-plugins/loopback']) {
      expect(statSync(d(p)).mode & 0o777, p).toBe(0o755);
    }
    expect(execFileSync(d('controller/etcd'), ['--version'], { encoding: 'utf8' })).toMatch(/etcd Version: 3\./);
    expect(execFileSync(d('client/etcdctl'), ['version'], { encoding: 'utf8' })).toMatch(/etcdctl version: 3\./);
    expect(execFileSync(d('worker/runc'), ['--version'], { encoding: 'utf8' })).toMatch(/runc version 1\./);
    expect(execFileSync(d('worker/containerd'), ['--version'], { encoding: 'utf8' })).toMatch(/containerd/);

    const m = readDownloads(project)!;
    expect(m.source).toBe('debian');
    expect(m.arch).toBe(native);
    // Built from the source package: each runs and says v1.20.2; the manifest says where it came from.
    const dsc = /^ ([0-9a-f]{64}) \d+ (kubernetes_\S+\.dsc)$/m.exec(execFileSync('apt-cache', ['showsrc', '--only-source', 'kubernetes', ...PRIVATE_SRC], { encoding: 'utf8' }))!;
    for (const [dir, name] of [['controller', 'kube-apiserver'], ['controller', 'kube-controller-manager'], ['controller', 'kube-scheduler'], ['worker', 'kubelet'], ['worker', 'kube-proxy']] as const) {
      expect(execFileSync(d(`${dir}/${name}`), ['--version'], { encoding: 'utf8' })).toBe('Kubernetes v1.20.2\n');
      const f = m.files.find((x) => x.path === `${dir}/${name}`)!;
      expect(f).toMatchObject({ component: 'kubernetes', version: 'v1.20.2', source: { kind: 'debian-source', package: 'kubernetes', dscSha256: dsc[1] } });
      expect(f.sha256).toBe(createHash('sha256').update(readFileSync(d(`${dir}/${name}`))).digest('hex'));
    }
    // Debian 12 has no cri-tools: the one binary left, said plainly; the command still succeeds.
    expect(m.missing).toEqual(['crictl']);
    expect(r.out).toContain('  - crictl');
    // The host's apt configuration is as it was: no deb-src entry was added.
    const sources = ['/etc/apt/sources.list', ...readdirSync('/etc/apt/sources.list.d').map((f) => `/etc/apt/sources.list.d/${f}`)].filter((f) => existsSync(f));
    expect(sources.length).toBeGreaterThan(0);
    for (const f of sources) expect(readFileSync(f, 'utf8'), f).not.toMatch(/deb-src/);
    const etcd = m.files.find((f) => f.path === 'controller/etcd')!;
    expect(etcd.source).toMatchObject({ kind: 'debian', package: 'etcd-server', arch: native });
    const src = etcd.source as { debSha256: string; packageVersion: string };
    expect(etcd.version).toBe(src.packageVersion);
    // The recorded .deb digest is the apt index's, and the cached .deb has exactly those bytes.
    const index = execFileSync('apt-cache', ['show', '--no-all-versions', `etcd-server:${native}`], { encoding: 'utf8' });
    expect(index).toContain(`SHA256: ${src.debSha256}`);
    expect(createHash('sha256').update(readFileSync(join(cache, src.debSha256))).digest('hex')).toBe(src.debSha256);
    const installed = createHash('sha256').update(readFileSync(d('controller/etcd'))).digest('hex');
    expect(etcd.sha256).toBe(installed);
  }, 1_800_000);

  it('a rerun takes every .deb and the built binaries from the cache and changes nothing', async () => {
    const before = readFileSync(join(project, 'downloads/manifest.json'), 'utf8');
    const r = await run(project, ['--source', 'debian']);
    expect(r.code).toBe(0);
    expect(r.out).not.toContain('downloaded');
    expect(r.out).toContain('server binaries: built before from Debian source');
    expect(r.out).not.toContain('building the server binaries');
    expect(r.out).toMatch(/downloads: 0 installed, \d+ unchanged/);
    expect(readFileSync(join(project, 'downloads/manifest.json'), 'utf8')).toBe(before);
  }, 120_000);
});

describe('Debian source for another architecture', () => {
  it('fetches the package built for that architecture (private apt lists, the system apt untouched)', async () => {
    const other = native === 'amd64' ? 'arm64' : 'amd64';
    const project = mkdtempSync(join(work, 'other-'));
    const foreignBefore = execFileSync('dpkg', ['--print-foreign-architectures'], { encoding: 'utf8' });
    const lines: string[] = [];
    const s = await downloadFromDebian({
      projectDir: project,
      arch: other,
      cache,
      aptListsRoot: join(cache, '..', 'apt-lists'),
      packages: DEBIAN_PACKAGES.filter((p) => p.package === 'runc'),
      buildServer: false,
      log: (l) => lines.push(l),
    });
    expect(s.installed).toEqual(['worker/runc']);
    expect(elfMachine(join(project, 'downloads/worker/runc'))).toBe(other === 'arm64' ? 0xb7 : 0x3e);
    expect(s.manifest.arch).toBe(other);
    expect(s.manifest.files[0]!.source).toMatchObject({ kind: 'debian', package: 'runc', arch: other });
    expect(execFileSync('dpkg', ['--print-foreign-architectures'], { encoding: 'utf8' })).toBe(foreignBefore);
  }, 180_000);
});
