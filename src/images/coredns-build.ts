// The CoreDNS binary, built offline (recipe: src/images/coredns-recipe.ts) and kept in hardway's
// cache, keyed by every input: the source archive, the Kubernetes source package, each Debian
// package, Go's version, the plugin list and the architecture. Built in a work directory and
// renamed into the cache only when the binary is whole (and, for this machine's architecture, says
// it is CoreDNS v1.8.3), under a lock, so one build of the same inputs runs at a time.
import { lstat, mkdir, readdir, readFile, readlink, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { FailureError } from '../errors.ts';
import { extractDeb } from '../download/archive.ts';
import { hostArch } from '../download/arch.ts';
import { aptFor, showPackages, type AptContext, type DebInfo } from '../download/apt.ts';
import { cachedBuild, GO_BUILD_CACHE, requireTools, type BuiltFiles } from '../download/build-cache.ts';
import { downloadsIn, findVerified, hashFile } from '../download/cache.ts';
import { fetchDebs } from '../download/debian.ts';
import { formatBytes } from '../download/progress.ts';
import { kubernetesSource, unpackKubernetesSource, type KubernetesSource } from '../download/kubernetes-source.ts';
import { progressLine, runLongBuild } from '../download/long-build.ts';
import { runLocal, tryLocal } from '../transport/local.ts';
import {
  buildKey, CADDY_LIBRARY, COREDNS_COMMIT, COREDNS_PLUGINS, COREDNS_VERSION, cutPluginCfg, DEBIAN_GO_LIBRARIES, fixKlogImport, gopathPlan,
  type CorednsInputs, type GoLibrary,
} from './coredns-recipe.ts';

/** What a finished build recorded (build.json beside the binary). */
export interface CorednsRecord extends BuiltFiles {
  version: string;
  key: string;
  inputs: CorednsInputs;
  /** The first line `coredns -version` printed, or why it was not run (another architecture). */
  reports: string;
}

/** Everything a build needs, passed in. */
export interface CorednsBuildOptions {
  /** hardway's cache root (the directory holding downloads/). */
  cacheRoot: string;
  arch: string;
  /** Where private apt lists for foreign architectures are kept. */
  aptListsRoot: string;
  /** The verified CoreDNS source archive. */
  archive: { path: string; sha256: string };
  /** The verified caddy .deb and its SHA-256; `get` runs only when the binary is built. */
  caddy: { sha256: string; get: () => Promise<string> };
  log: (line: string) => void;
}

/** A built CoreDNS binary and its record. */
export interface CorednsBinary {
  path: string;
  record: CorednsRecord;
}

/** The tools the build runs. */
const TOOLS: Record<string, string> = { go: 'golang-go', 'dpkg-deb': 'dpkg', tar: 'tar' };

/** The CoreDNS binary for these inputs, from the cache or built now. */
export async function buildCoredns(opts: CorednsBuildOptions): Promise<CorednsBinary> {
  await requireTools(TOOLS, `building CoreDNS ${COREDNS_VERSION}`);
  const goVersion = (await runLocal('go', ['version'])).stdout.trim();
  const src = await kubernetesSource(opts.cacheRoot);
  // The libraries are architecture-independent (all) packages: the host's own apt lists have them.
  const apt = await aptFor(await hostArch(), opts.aptListsRoot);
  const debs = await showLibraries(apt);
  const inputs: CorednsInputs = {
    archiveSha256: opts.archive.sha256, kubernetesDsc: src.pkg.dsc.sha256,
    debs: debs.map((d) => ({ package: d.package, version: d.version, sha256: d.sha256 })),
    caddySha256: opts.caddy.sha256, goVersion, plugins: COREDNS_PLUGINS, arch: opts.arch,
  };
  const key = buildKey(inputs);
  const root = join(opts.cacheRoot, 'coredns-build');
  const final = join(root, `${COREDNS_VERSION.slice(1)}-${opts.arch}-${key.slice(0, 16)}`);
  const record = await cachedBuild<CorednsRecord>({
    final, work: join(root, `.work-${key.slice(0, 16)}`), what: `CoreDNS ${COREDNS_VERSION} (${opts.arch})`, log: opts.log,
    accept: (r) => r.key === key,
    cachedLine: () => `  coredns ${COREDNS_VERSION} (${opts.arch}): built before from the same inputs (cached)`,
    build: (work, out) => build({ ...opts, src, apt, debs, inputs, key, work, out }),
  });
  return { path: join(final, 'coredns'), record };
}

interface BuildContext extends CorednsBuildOptions {
  src: KubernetesSource;
  apt: AptContext;
  debs: DebInfo[];
  inputs: CorednsInputs;
  key: string;
  work: string;
  out: string;
}

async function build(c: BuildContext): Promise<CorednsRecord> {
  const started = Date.now();
  const step = (line: string) => c.log(progressLine(started, line));
  c.log(`  coredns ${COREDNS_VERSION} (${c.arch}): building from source with ${c.inputs.goVersion.split(' ')[2] ?? c.inputs.goVersion} (2 to 4 minutes on 2 cores the first time, seconds with Go's build cache)`);
  const cache = downloadsIn(c.cacheRoot);
  const tree = await unpackKubernetesSource(c.src, join(c.work, 'src'), cache, c.log, ['vendor', 'staging/src/k8s.io']);
  const libraries = await fetchLibraries(c.apt, c.debs, cache, c.log);
  libraries.push({ library: CADDY_LIBRARY, deb: await c.caddy.get() });
  const unpacked: { library: GoLibrary; unpacked: string }[] = [];
  for (const { library, deb } of libraries) {
    const dir = join('debs', library.package);
    await extractDeb(deb, join(c.work, dir)); // only unpacked: nothing is installed
    unpacked.push({ library, unpacked: dir });
  }
  await runLocal('tar', ['-xzf', c.archive.path, '-C', c.work, '--no-same-owner']);
  const coredns = `coredns-${COREDNS_VERSION.slice(1)}`;
  if (!(await stat(join(c.work, coredns, 'coredns.go')).catch(() => undefined))) {
    throw new FailureError(`the CoreDNS source archive has no ${coredns}/coredns.go`, 'dns.source must be the CoreDNS v1.8.3 source archive');
  }
  const gopath = join(c.work, 'gopath');
  await layOut(c.work, gopath, { tree: tree.slice(c.work.length + 1), vendorDirs: await dirsIn(join(tree, 'vendor')), k8sLinks: await linksIn(join(tree, 'vendor/k8s.io')), libraries: unpacked, coredns });
  const dir = join(gopath, 'src/github.com/coredns/coredns');
  await edit(join(dir, 'plugin.cfg'), (t) => cutPluginCfg(t));
  await edit(join(dir, 'plugin/kubernetes/setup.go'), fixKlogImport);
  step(`GOPATH laid out: Kubernetes ${c.src.version} vendor/ and staging/, ${unpacked.length} Debian packages, CoreDNS with ${COREDNS_PLUGINS.length} plugins`);
  const goCache = join(c.cacheRoot, GO_BUILD_CACHE);
  await mkdir(goCache, { recursive: true });
  const goEnv = { GOPATH: gopath, GOCACHE: goCache, GO111MODULE: 'off', GOFLAGS: '', GOPROXY: 'off', GOTOOLCHAIN: 'local', CGO_ENABLED: '0' };
  // The generator runs here, so for this machine; the binary is for the machines (GOARCH below).
  await runLocal('env', [...Object.entries(goEnv).map(([k, v]) => `${k}=${v}`), 'go', 'run', 'directives_generate.go'], { cwd: dir });
  step(`plugin list generated: ${COREDNS_PLUGINS.join(', ')}`);
  const binary = join(c.out, 'coredns');
  let compiled = 0;
  await runLongBuild({
    command: 'go',
    args: ['build', '-v', '-trimpath', '-ldflags', `-s -w -X github.com/coredns/coredns/coremain.GitCommit=${COREDNS_COMMIT.slice(0, 7)}`, '-o', binary, '.'],
    cwd: dir, env: { ...process.env, ...goEnv, GOARCH: c.arch }, logFile: join(dirname(c.work), 'last-build.log'), started, log: c.log,
    // `go build -v` names each package it compiles: say every 50th, so the count shows it moving.
    progressOf: (line) => (/^[\w.-]+(\/[\w.~+-]+)*$/.test(line) && ++compiled % 50 === 0 ? `compiled ${compiled} packages (now ${line})` : undefined),
    quiet: '  still compiling (a large package takes a while)',
    what: `building CoreDNS ${COREDNS_VERSION}`,
    hint: `see the lines above and ${join(dirname(c.work), 'last-build.log')}; run the command again once the cause is fixed`,
  });
  const reports = c.arch === (await hostArch()) ? await checkVersion(binary) : `not run (built for ${c.arch})`;
  const size = (await stat(binary)).size;
  c.log(`  built coredns ${COREDNS_VERSION} in ${Math.round((Date.now() - started) / 1000)} s: ${formatBytes(size)}, ${reports}`);
  return { version: COREDNS_VERSION, key: c.key, inputs: c.inputs, reports, files: { coredns: { sha256: await hashFile(binary, 'sha256'), size } } };
}

/** The Debian libraries' candidates in the signed index (their SHA-256s are part of the cache key). */
async function showLibraries(apt: AptContext): Promise<DebInfo[]> {
  const names = DEBIAN_GO_LIBRARIES.map((l) => l.package);
  const infos = await showPackages(apt, names);
  const missing = names.filter((n) => !infos.has(n));
  if (missing.length > 0) throw new FailureError(`apt knows no package ${missing.join(', ')}`, 'run "apt-get update" (with Debian main in the sources) and try again');
  return names.map((n) => infos.get(n)!);
}

/** Each library's .deb, from the download cache or fetched and verified against the index. */
async function fetchLibraries(apt: AptContext, debs: DebInfo[], cache: string, log: (line: string) => void): Promise<{ library: GoLibrary; deb: string }[]> {
  const have = new Map<string, string>();
  for (const d of debs) {
    const cached = await findVerified(cache, 'sha256', d.sha256);
    if (cached) have.set(d.package, cached);
  }
  const fetched = await fetchDebs(apt, debs.filter((d) => !have.has(d.package)), cache);
  log(`  ${debs.length} Debian packages (${debs.map((d) => `${d.package} ${d.version}`).join(', ')}): ${fetched.size} downloaded, ${have.size} cached, sha256 verified against the signed index`);
  return DEBIAN_GO_LIBRARIES.map((library) => ({ library, deb: have.get(library.package) ?? fetched.get(library.package)! }));
}

/** Makes GOPATH/src by the recipe's moves (renames inside the work directory: nothing is copied). */
async function layOut(work: string, gopath: string, parts: Parameters<typeof gopathPlan>[0]): Promise<void> {
  for (const move of gopathPlan(parts)) {
    const from = join(work, move.from);
    if (!(await lstat(from).catch(() => undefined))) throw new FailureError(`the CoreDNS build expected ${move.from} in its work directory`, 'a source package changed its layout; report it');
    const to = join(gopath, 'src', move.to);
    await rm(to, { recursive: true, force: true });
    await mkdir(dirname(to), { recursive: true });
    await rename(from, to);
  }
}

async function dirsIn(dir: string): Promise<string[]> {
  return (await readdir(dir, { withFileTypes: true })).filter((e) => e.isDirectory()).map((e) => e.name);
}

async function linksIn(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const e of await readdir(dir, { withFileTypes: true })) if (e.isSymbolicLink()) out[e.name] = await readlink(join(dir, e.name));
  return out;
}

async function edit(file: string, change: (text: string) => string): Promise<void> {
  await writeFile(file, change(await readFile(file, 'utf8')));
}

async function checkVersion(binary: string): Promise<string> {
  const r = await tryLocal`${binary} -version`;
  const first = (r.stdout + r.stderr).trim().split('\n')[0] ?? '';
  if (first !== `CoreDNS-${COREDNS_VERSION.slice(1)}`) throw new FailureError(`the built coredns reports "${first}", not CoreDNS-${COREDNS_VERSION.slice(1)}`);
  return `${first} (${(r.stdout.trim().split('\n')[1] ?? '').trim()})`;
}
