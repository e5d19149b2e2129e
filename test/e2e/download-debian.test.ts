// `hardway download --source debian` for real: apt-get download from Debian's mirror (the only
// network this test uses), dpkg -x, and the binaries run. The .debs are cached in the user's cache
// (${XDG_CACHE_HOME:-~/.cache}/hardway/downloads), so reruns do not download them again.
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, openSync, readFileSync, readSync, closeSync, rmSync, statSync } from 'node:fs';
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

  it('extracts what Debian packages carry, verified against the apt index, and lists what is missing', async () => {
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
    // Nothing in Debian 12 carries these; the command says so and still succeeds.
    for (const name of ['kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'kubelet', 'kube-proxy']) {
      expect(m.missing).toContain(name);
      expect(r.out).toContain(`  - ${name}`);
    }
    expect(r.out).toContain('Not provided by any Debian package');
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
  }, 180_000);

  it('a rerun takes every .deb from the cache and changes nothing', async () => {
    const before = readFileSync(join(project, 'downloads/manifest.json'), 'utf8');
    const r = await run(project, ['--source', 'debian']);
    expect(r.code).toBe(0);
    expect(r.out).not.toContain('downloaded');
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
      log: (l) => lines.push(l),
    });
    expect(s.installed).toEqual(['worker/runc']);
    expect(elfMachine(join(project, 'downloads/worker/runc'))).toBe(other === 'arm64' ? 0xb7 : 0x3e);
    expect(s.manifest.arch).toBe(other);
    expect(s.manifest.files[0]!.source).toMatchObject({ kind: 'debian', package: 'runc', arch: other });
    expect(execFileSync('dpkg', ['--print-foreign-architectures'], { encoding: 'utf8' })).toBe(foreignBefore);
  }, 180_000);
});
