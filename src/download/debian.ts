// `hardway download --source debian`: for machines without internet access, take what Debian's own
// packages carry (older versions, but verified by apt against the signed index), build the
// Kubernetes server binaries from Debian's source package (src/download/kubernetes-build.ts), and
// say plainly which binaries are still missing. The .debs are cached by their SHA-256 like release files.
import { copyFile, link, mkdir, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { FailureError } from '../errors.ts';
import { extractDeb, pickFiles } from './archive.ts';
import { aptDownload, aptFor, showPackages, type AptContext, type DebInfo } from './apt.ts';
import { cacheTempPath, commitToCache, findVerified, hashFile } from './cache.ts';
import { dropStaging, installFiles, makeStaging, type InstallSummary, type StagedFile } from './install.ts';
import { BINARY_DIRS, REQUIRED_CNI_PLUGINS } from './layout.ts';
import { buildServerBinaries, type BuiltBinary } from './kubernetes-build.ts';
import { binaryRelPath } from './layout.ts';
import type { Arch, FileRule } from './versions.ts';

/** A Debian package and the binaries hardway takes from it. */
export interface DebianPackage {
  package: string;
  component: string;
  files: FileRule[];
  /** Not every release of Debian has it: when apt has no such package its binaries are reported missing. */
  optional?: boolean;
}

/** What Debian 12 carries, and where each binary sits inside its package. */
export const DEBIAN_PACKAGES: readonly DebianPackage[] = [
  { package: 'etcd-server', component: 'etcd', files: [{ from: 'usr/bin/etcd', to: 'controller/etcd' }] },
  { package: 'etcd-client', component: 'etcd', files: [{ from: 'usr/bin/etcdctl', to: 'client/etcdctl' }] },
  {
    package: 'containerd',
    component: 'containerd',
    files: [
      { from: 'usr/bin/containerd', to: 'worker/containerd' },
      { from: 'usr/bin/containerd-shim-runc-v2', to: 'worker/containerd-shim-runc-v2' },
      { from: 'usr/bin/ctr', to: 'worker/ctr' },
    ],
  },
  { package: 'runc', component: 'runc', files: [{ from: 'usr/sbin/runc', to: 'worker/runc' }] },
  { package: 'containernetworking-plugins', component: 'cni-plugins', files: [{ fromDir: 'usr/lib/cni', toDir: 'cni-plugins' }] },
  { package: 'kubernetes-client', component: 'kubernetes', files: [{ from: 'usr/bin/kubectl', to: 'client/kubectl' }] },
  // Debian 12 has no cri-tools; a later release may. Checked, never assumed.
  { package: 'cri-tools', component: 'crictl', optional: true, files: [{ from: 'usr/bin/crictl', to: 'worker/crictl' }] },
];

/** Everything a Debian-source download needs, passed in. */
export interface DebianOptions {
  projectDir: string;
  arch: Arch;
  cache: string;
  /** Where private apt lists for foreign architectures are kept. */
  aptListsRoot: string;
  packages?: readonly DebianPackage[];
  /**
   * The Kubernetes server binaries, built from Debian's source package (the default) or given by a
   * caller; `false` leaves them out (listed as missing), for a download of the packages alone.
   */
  buildServer?: ((opts: { cacheRoot: string; arch: string; log: (line: string) => void }) => Promise<BuiltBinary[]>) | false;
  log: (line: string) => void;
}

/** Extracts the binaries Debian's packages carry into downloads/ and records what is still missing. */
export async function downloadFromDebian(opts: DebianOptions): Promise<InstallSummary> {
  const apt = await aptFor(opts.arch, opts.aptListsRoot);
  const wanted = opts.packages ?? DEBIAN_PACKAGES;
  const infos = await showPackages(apt, wanted.map((p) => p.package));
  const found: { pkg: DebianPackage; info: DebInfo }[] = [];
  for (const pkg of wanted) {
    const info = infos.get(pkg.package);
    if (info) found.push({ pkg, info });
    else if (pkg.optional) opts.log(`  ${pkg.package} (${opts.arch}): no such Debian package here`);
    else throw new FailureError(`apt knows no package ${pkg.package} for ${opts.arch}`, 'run "apt-get update" (with Debian main in the sources) and try again');
  }
  const debPath = new Map<string, string>();
  for (const { info } of found) {
    const cached = await findVerified(opts.cache, 'sha256', info.sha256);
    if (cached) debPath.set(info.package, cached);
  }
  const fetched = await fetchDebs(apt, found.map((f) => f.info).filter((i) => !debPath.has(i.package)), opts.cache);
  for (const { info } of found) {
    opts.log(`  ${info.package} ${info.version} (${info.arch}): ${fetched.has(info.package) ? 'downloaded' : 'cached'}, sha256 verified`);
    debPath.set(info.package, debPath.get(info.package) ?? fetched.get(info.package)!);
  }
  const debs = found.map(({ pkg, info }) => ({ pkg, info, deb: debPath.get(info.package)! }));
  const staging = await makeStaging(opts.projectDir);
  try {
    const staged: StagedFile[] = [];
    for (const { pkg, deb, info } of debs) {
      const dir = join(staging, pkg.package);
      await extractDeb(deb, dir);
      const source = { kind: 'debian' as const, package: pkg.package, packageVersion: info.version, arch: info.arch, debSha256: info.sha256, debFile: basename(info.filename) };
      for (const f of await pickFiles(dir, pkg.files, `Debian package ${pkg.package} ${info.version}`, opts.arch)) {
        staged.push({ staged: f.staged, path: f.to, component: pkg.component, version: info.version, source });
      }
    }
    if (opts.buildServer !== false) {
      const built = await (opts.buildServer ?? buildServerBinaries)({ cacheRoot: dirname(opts.cache), arch: opts.arch, log: opts.log });
      for (const b of built) {
        const file = join(staging, 'built', b.name);
        await mkdir(dirname(file), { recursive: true });
        // A hard link where the cache and downloads/ share a filesystem (400 MB not copied on every
        // rerun); the staged bytes are hashed against the build's record before anything is installed.
        await link(b.path, file).catch(() => copyFile(b.path, file));
        const r = b.record;
        staged.push({
          staged: file, path: binaryRelPath(b.name), component: 'kubernetes', version: r.version, expectedSha256: r.files[b.name]?.sha256,
          source: { kind: 'debian-source', package: r.package, packageVersion: r.packageVersion, dscSha256: r.dscSha256, builtWith: r.goVersion },
        });
      }
    }
    const have = new Set(staged.map((s) => s.path));
    const missing = [
      ...Object.entries(BINARY_DIRS).filter(([n, d]) => !have.has(`${d}/${n}`)).map(([n]) => n),
      ...REQUIRED_CNI_PLUGINS.filter((p) => !have.has(`cni-plugins/${p}`)).map((p) => `cni-plugins/${p}`),
    ];
    return await installFiles(opts.projectDir, staged, { source: 'debian', arch: opts.arch, missing });
  } finally {
    await dropStaging(staging);
  }
}

/**
 * One apt-get download for every package not yet cached, into a temp dir in the cache; each .deb
 * is checked against the SHA-256 of the apt index and only then moved into the cache.
 */
export async function fetchDebs(apt: AptContext, infos: DebInfo[], cache: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  if (infos.length === 0) return out;
  const temp = await cacheTempPath(cache, 'apt');
  try {
    const files = await aptDownload(apt, infos, temp);
    const byHash = new Map<string, string>();
    for (const f of files) byHash.set(await hashFile(f, 'sha256'), f);
    for (const info of infos) {
      const deb = byHash.get(info.sha256);
      if (!deb) {
        const written = files.find((f) => basename(f).startsWith(`${info.package}_`));
        const actual = written ? await hashFile(written, 'sha256') : 'no file written';
        throw new FailureError(
          `checksum mismatch for ${written ? basename(written) : info.package}\n  package:  ${info.package} ${info.version}\n  expected: sha256:${info.sha256} (apt index)\n  actual:   ${written ? `sha256:${actual}` : actual}`,
          'run "apt-get update" and try again',
        );
      }
      out.set(info.package, await commitToCache(cache, deb, info.sha256));
    }
    return out;
  } finally {
    await rm(temp, { recursive: true, force: true });
  }
}
