// The Kubernetes server binaries without internet access: no Debian package carries
// kube-apiserver, kube-controller-manager, kube-scheduler, kubelet or kube-proxy, but Debian's
// `kubernetes` source package holds the whole upstream tree with vendor/, and Debian's Go builds
// it offline (lab-notes: "Real Kubernetes server binaries, offline"). Built once per source
// package (keyed by the .dsc's SHA-256 from the signed index), in a temporary directory renamed
// into the cache only when every binary ran and reported the expected version, so an interrupted
// or failed build leaves nothing a rerun would trust.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { copyFile, mkdir, readFile, rename, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { FailureError, PreconditionError } from '../errors.ts';
import { aptSourceFor, fetchSource, showSource, type SourcePackage } from './apt-source.ts';
import { hashFile } from './cache.ts';
import { runLocal, tryLocal } from '../transport/local.ts';

/** The five binaries built from the source package, by their cmd/ directory names. */
export const SERVER_BINARIES = ['kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'kubelet', 'kube-proxy'] as const;

/** The Debian source package that carries the Kubernetes tree. */
export const KUBERNETES_SOURCE = 'kubernetes';

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

/** The upstream version inside a Debian version: 1.20.5+really1.20.2-1.1+deb12u1 -> v1.20.2. */
export function upstreamVersion(debianVersion: string): string {
  const noEpoch = debianVersion.replace(/^\d+:/, '');
  const really = /really([0-9][0-9.]*[0-9])/.exec(noEpoch)?.[1];
  const plain = /^([0-9]+\.[0-9]+\.[0-9]+)/.exec(noEpoch)?.[1];
  const v = really ?? plain;
  if (!v) throw new FailureError(`cannot read an upstream version from Debian version ${debianVersion}`);
  return `v${v}`;
}

/** The binaries of the current source package, built now or taken from the cache. */
export async function buildServerBinaries(opts: BuildOptions): Promise<BuiltBinary[]> {
  const root = join(opts.cacheRoot, 'kubernetes-build');
  const apt = await aptSourceFor(join(opts.cacheRoot, 'apt-source'), debianSuite());
  const pkg = await showSource(apt, KUBERNETES_SOURCE);
  const final = join(root, `${pkg.dsc.sha256}-${opts.arch}`);
  const cached = await readRecord(final);
  if (cached) {
    opts.log(`  kubernetes ${cached.version} server binaries: built before from Debian source ${pkg.version} (cached)`);
    return binariesOf(final, cached);
  }
  await requireTools();
  await mkdir(root, { recursive: true });
  // The same directory for every build of this source: Go's build cache keys include the paths the
  // compiler is given (-trimpath), so a new path each time would never hit the cache.
  const work = join(root, `.work-${pkg.dsc.sha256.slice(0, 12)}-${opts.arch}`);
  await takeBuildLock(`${work}.pid`);
  try {
    await rm(work, { recursive: true, force: true }); // what an interrupted build left: never trusted
    const record = await build(apt, pkg, work, opts);
    // The finished directory: binaries plus build.json, renamed into place in one step.
    const out = join(work, 'out');
    await mkdir(out);
    for (const name of SERVER_BINARIES) await copyFile(join(work, 'bin', name), join(out, name));
    await writeFile(join(out, 'build.json'), JSON.stringify(record, null, 2) + '\n');
    await rm(final, { recursive: true, force: true });
    await rename(out, final);
    return binariesOf(final, record);
  } finally {
    await rm(work, { recursive: true, force: true });
    await rm(`${work}.pid`, { force: true });
  }
}

/** One build per source at a time: a live holder is an error naming it; a dead one's lock is taken over. */
async function takeBuildLock(file: string): Promise<void> {
  const holder = Number(await readFile(file, 'utf8').catch(() => ''));
  if (holder > 0 && holder !== process.pid && existsSync(`/proc/${holder}`)) {
    throw new FailureError(`another hardway process (pid ${holder}) is building the same Kubernetes source right now`,
      'wait for it to finish, then run the command again: it will take the binaries from the cache');
  }
  await writeFile(file, `${process.pid}\n`);
}

async function build(apt: Awaited<ReturnType<typeof aptSourceFor>>, pkg: SourcePackage, work: string, opts: BuildOptions): Promise<BuildRecord> {
  const version = upstreamVersion(pkg.version);
  const [, major, minor] = /^v(\d+)\.(\d+)/.exec(version)!;
  opts.log(`  kubernetes ${version}: building the server binaries from Debian source package ${pkg.package} ${pkg.version} (several minutes, once)`);
  await fetchSource(apt, pkg, join(work, 'src'));
  opts.log(`  source files verified against the signed index (sha256 of ${pkg.dsc.name}: ${pkg.dsc.sha256})`);
  const orig = pkg.files.find((f) => f.name.includes('.orig.tar'))!;
  await runLocal('tar', ['-xf', join(work, 'src', orig.name), '-C', join(work, 'src')]);
  const tree = join(work, 'src', `kubernetes-${version.slice(1)}`);
  if (!existsSync(join(tree, 'Makefile'))) throw new FailureError(`${orig.name} has no kubernetes-${version.slice(1)}/Makefile`, 'the source package changed its layout; report it');
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
  const goCache = join(opts.cacheRoot, 'go-build-cache');
  await mkdir(goCache, { recursive: true });
  await mkdir(join(tree, '_output/local/go'), { recursive: true });
  await symlink(goCache, join(tree, '_output/local/go/cache'));
  const started = Date.now();
  const targets = SERVER_BINARIES.map((b) => `cmd/${b}`).join(' ');
  await runMake(tree, ['-s', `WHAT=${targets}`], env, join(work, 'build.log'), (line) => {
    opts.log(`    [${Math.round((Date.now() - started) / 1000)} s] ${line}`);
  });
  await mkdir(join(work, 'bin'));
  const files: BuildRecord['files'] = {};
  for (const name of SERVER_BINARIES) {
    const built = join(tree, '_output/local/bin/linux', opts.arch, name);
    await copyFile(built, join(work, 'bin', name));
    if (opts.arch === (await nativeArch())) await checkVersion(join(work, 'bin', name), version);
    files[name] = { sha256: await hashFile(join(work, 'bin', name), 'sha256'), size: (await stat(built)).size };
  }
  opts.log(`  built ${SERVER_BINARIES.length} binaries in ${Math.round((Date.now() - started) / 1000)} s`);
  return { package: pkg.package, packageVersion: pkg.version, dscSha256: pkg.dsc.sha256, version, goVersion, files };
}

/** How often a build that prints nothing says that it is still running. */
const HEARTBEAT_MS = 60_000;

/** Runs make, each "+++" progress line to `progress`, all output to `logFile`; the log's tail on failure. */
function runMake(cwd: string, args: string[], env: NodeJS.ProcessEnv, logFile: string, progress: (line: string) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('make', args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    const tail: string[] = [];
    const chunks: Buffer[] = [];
    let lastLine = Date.now();
    const say = (line: string) => {
      lastLine = Date.now();
      progress(line);
    };
    const onData = (b: Buffer) => {
      chunks.push(b);
      for (const line of b.toString().split('\n')) {
        if (!line.trim()) continue;
        tail.push(line);
        if (tail.length > 30) tail.shift();
        const m = /^\+\+\+ \[[^\]]*\] (.*)$/.exec(line);
        if (m) say(m[1]!);
        else if (/^\s+\.\/(cmd|vendor)\//.test(line)) say(`  ${line.trim()}`);
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    // Compiling the five binaries prints nothing for many minutes: say now and then that it goes on.
    const heartbeat = setInterval(() => {
      if (Date.now() - lastLine >= HEARTBEAT_MS) progress(`  still compiling (go build prints nothing until a binary is done; the whole build takes 8 to 13 minutes on 2 cores)`);
    }, HEARTBEAT_MS);
    child.on('error', (e) => {
      clearInterval(heartbeat);
      reject(e);
    });
    child.on('close', (code, signal) => {
      clearInterval(heartbeat);
      void writeFile(logFile, Buffer.concat(chunks)).catch(() => undefined);
      if (code === 0) resolve();
      else reject(new FailureError(`building Kubernetes failed (make exit ${code ?? signal}) in ${cwd}:\n${tail.map((l) => `  ${l}`).join('\n')}`,
        'see the lines above; rerun "hardway download --source debian" once the cause is fixed'));
    });
  });
}

async function checkVersion(binary: string, version: string): Promise<void> {
  const r = await tryLocal`${binary} --version`;
  if (!r.stdout.includes(`Kubernetes ${version}`)) {
    throw new FailureError(`the built ${binary} reports "${(r.stdout + r.stderr).trim().split('\n')[0]}", not Kubernetes ${version}`);
  }
}

async function nativeArch(): Promise<string> {
  return (await tryLocal`dpkg --print-architecture`).stdout.trim();
}

async function requireTools(): Promise<void> {
  const missing: string[] = [];
  for (const [tool, pkg] of Object.entries(BUILD_TOOLS)) {
    if ((await tryLocal`sh -c ${`command -v ${tool}`}`).code !== 0) missing.push(pkg);
  }
  if (missing.length > 0) {
    throw new PreconditionError(`building the Kubernetes server binaries needs Debian packages that are not installed: ${missing.join(', ')}`,
      `run "apt-get install -y ${missing.join(' ')}" (as root), or scripts/setup.sh, and try again`);
  }
}

/** The Debian suite of this machine (its codename), whose source package is built. */
function debianSuite(): string {
  try {
    return /^VERSION_CODENAME=(\S+)/m.exec(readFileSync('/etc/os-release', 'utf8'))?.[1] ?? 'bookworm';
  } catch {
    return 'bookworm';
  }
}

async function readRecord(dir: string): Promise<BuildRecord | undefined> {
  try {
    const record = JSON.parse(readFileSync(join(dir, 'build.json'), 'utf8')) as BuildRecord;
    // A binary changed or removed since (by hand, or disk trouble) means the build is not trusted.
    for (const name of SERVER_BINARIES) {
      const st = await stat(join(dir, name));
      if (st.size !== record.files[name]?.size) return undefined;
    }
    return record;
  } catch {
    return undefined;
  }
}

function binariesOf(dir: string, record: BuildRecord): BuiltBinary[] {
  return SERVER_BINARIES.map((name) => ({ name, path: join(dir, name), record }));
}

