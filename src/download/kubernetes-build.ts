// The Kubernetes server binaries without internet access: no Debian package carries
// kube-apiserver, kube-controller-manager, kube-scheduler, kubelet or kube-proxy, but Debian's
// `kubernetes` source package holds the whole upstream tree with vendor/, and Debian's Go builds
// it offline (lab-notes: "Real Kubernetes server binaries, offline"). Built once per source
// package (keyed by the .dsc's SHA-256 from the signed index), in a temporary directory renamed
// into the cache only when every binary ran and reported the expected version, so an interrupted
// or failed build leaves nothing a rerun would trust.
import { copyFile, mkdir, stat, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { FailureError } from '../errors.ts';
import { hostArch } from './arch.ts';
import { cachedBuild, GO_BUILD_CACHE, requireTools } from './build-cache.ts';
import { downloadsIn, hashFile } from './cache.ts';
import { kubernetesSource, unpackKubernetesSource, type KubernetesSource } from './kubernetes-source.ts';
import { runLongBuild } from './long-build.ts';
import { runLocal, tryLocal } from '../transport/local.ts';

/** The five binaries built from the source package, by their cmd/ directory names. */
export const SERVER_BINARIES = ['kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'kubelet', 'kube-proxy'] as const;

/** Debian packages the build needs on the jumpbox (Go and the tools hack/ scripts call). */
export const BUILD_TOOLS: Record<string, string> = { go: 'golang-go', make: 'make', rsync: 'rsync', jq: 'jq', gcc: 'gcc' };

/** What a finished build recorded: written last, so its presence means the build is whole. */
export interface BuildRecord {
  package: string;
  packageVersion: string;
  dscSha256: string;
  /** The upstream version the binaries report, e.g. v1.20.2. */
  version: string;
  goVersion: string;
  files: Record<string, { sha256: string; size: number }>;
}

/** A built binary ready to stage into downloads/. */
export interface BuiltBinary {
  name: (typeof SERVER_BINARIES)[number];
  path: string;
  record: BuildRecord;
}

/** Everything a build needs, passed in. */
export interface BuildOptions {
  /** hardway's cache root (the directory holding downloads/). */
  cacheRoot: string;
  arch: string;
  log: (line: string) => void;
}

/** The binaries of the current source package, built now or taken from the cache. */
export async function buildServerBinaries(opts: BuildOptions): Promise<BuiltBinary[]> {
  const root = join(opts.cacheRoot, 'kubernetes-build');
  const src = await kubernetesSource(opts.cacheRoot);
  const final = join(root, `${src.pkg.dsc.sha256}-${opts.arch}`);
  const record = await cachedBuild<BuildRecord>({
    final, work: join(root, `.work-${src.pkg.dsc.sha256.slice(0, 12)}-${opts.arch}`), what: `the Kubernetes ${src.version} server binaries`, log: opts.log,
    cachedLine: (r) => `  kubernetes ${r.version} server binaries: built before from Debian source ${src.pkg.version} (cached)`,
    prepare: () => requireTools(BUILD_TOOLS, 'building the Kubernetes server binaries'),
    build: async (work, out) => {
      const r = await build(src, work, opts);
      for (const name of SERVER_BINARIES) await copyFile(join(work, 'bin', name), join(out, name));
      return r;
    },
  });
  return binariesOf(final, record);
}

async function build(src: KubernetesSource, work: string, opts: BuildOptions): Promise<BuildRecord> {
  const { pkg, version } = src;
  const [, major, minor] = /^v(\d+)\.(\d+)/.exec(version)!;
  opts.log(`  kubernetes ${version}: building the server binaries from Debian source package ${pkg.package} ${pkg.version} (several minutes, once)`);
  const tree = await unpackKubernetesSource(src, join(work, 'src'), downloadsIn(opts.cacheRoot), opts.log);
  const goVersion = (await runLocal('go', ['version'])).stdout.trim();
  const env = {
    ...process.env,
    KUBE_GIT_VERSION: version, KUBE_GIT_MAJOR: major!, KUBE_GIT_MINOR: minor!, KUBE_GIT_TREE_STATE: 'clean',
    KUBE_BUILD_PLATFORMS: `linux/${opts.arch}`,
    GOFLAGS: '-mod=vendor', GOTOOLCHAIN: 'local', GOPROXY: 'off',
  };
  // hack/lib/golang.sh sets GOCACHE to _output/local/go/cache whatever the environment says. Go's
  // build cache is content-addressed and checks itself, so a later build (after a failure or an
  // interruption, or of another source version) may reuse it safely: that path points into
  // hardway's cache, and such a rebuild takes a minute instead of many.
  const goCache = join(opts.cacheRoot, GO_BUILD_CACHE);
  await mkdir(goCache, { recursive: true });
  await mkdir(join(tree, '_output/local/go'), { recursive: true });
  await symlink(goCache, join(tree, '_output/local/go/cache'));
  const started = Date.now();
  const targets = SERVER_BINARIES.map((b) => `cmd/${b}`).join(' ');
  await runLongBuild({
    command: 'make', args: ['-s', `WHAT=${targets}`], cwd: tree, env, logFile: join(work, 'build.log'), started, log: opts.log,
    progressOf: (line) => {
      const m = /^\+\+\+ \[[^\]]*\] (.*)$/.exec(line);
      if (m) return m[1]!;
      return /^\s+\.\/(cmd|vendor)\//.test(line) ? `  ${line.trim()}` : undefined;
    },
    // Compiling the five binaries prints nothing for many minutes: say now and then that it goes on.
    quiet: '  still compiling (go build prints nothing until a binary is done; the whole build takes 8 to 13 minutes on 2 cores)',
    what: 'building Kubernetes',
    hint: 'see the lines above; rerun "hardway download --source debian" once the cause is fixed',
  });
  await mkdir(join(work, 'bin'));
  const files: BuildRecord['files'] = {};
  for (const name of SERVER_BINARIES) {
    const built = join(tree, '_output/local/bin/linux', opts.arch, name);
    await copyFile(built, join(work, 'bin', name));
    if (opts.arch === (await hostArch())) await checkVersion(join(work, 'bin', name), version);
    files[name] = { sha256: await hashFile(join(work, 'bin', name), 'sha256'), size: (await stat(built)).size };
  }
  opts.log(`  built ${SERVER_BINARIES.length} binaries in ${Math.round((Date.now() - started) / 1000)} s`);
  return { package: pkg.package, packageVersion: pkg.version, dscSha256: pkg.dsc.sha256, version, goVersion, files };
}

async function checkVersion(binary: string, version: string): Promise<void> {
  const r = await tryLocal`${binary} --version`;
  if (!r.stdout.includes(`Kubernetes ${version}`)) {
    throw new FailureError(`the built ${binary} reports "${(r.stdout + r.stderr).trim().split('\n')[0]}", not Kubernetes ${version}`);
  }
}

function binariesOf(dir: string, record: BuildRecord): BuiltBinary[] {
  return SERVER_BINARIES.map((name) => ({ name, path: join(dir, name), record }));
}

