// How CoreDNS v1.8.3 builds offline with Debian's Go, as pure rules (what goes where, which text
// changes): no Debian suite ships CoreDNS, but v1.8.3 needs exactly the client-go, api and
// apimachinery of Kubernetes v1.20.2, which Debian's `kubernetes` source package carries (staging/),
// with most other libraries in its vendor/. GOPATH mode, no go.mod: the GOPATH's src/ is the
// Kubernetes vendor/ tree with staging/ in place of its links, a few libraries from Debian
// packages (only unpacked) over it, and CoreDNS with a cut plugin list.
import { createHash } from 'node:crypto';
import { posix } from 'node:path';
import { FailureError } from '../errors.ts';

/** The CoreDNS release hardway builds: the last whose Kubernetes libraries are v0.20.2. */
export const COREDNS_VERSION = 'v1.8.3';

/** A file hardway takes only with these exact bytes. */
export interface PinnedFile {
  name: string;
  sha256: string;
  /** The most bytes read of it, a little above its size: a bigger file or download cannot be it and is cut short. */
  maxBytes?: number;
}

/** The CoreDNS source: `git archive --prefix=coredns-1.8.3/ v1.8.3 | gzip -n` of github.com/coredns/coredns. */
export const COREDNS_ARCHIVE: PinnedFile = { name: 'coredns-1.8.3.tar.gz', sha256: '052115caca6fcc7799cb65bd786f89eadeba076e0e78ef85693d94f8d3aca347', maxBytes: 4 * 1024 * 1024 }; // git archive | gzip -n of v1.8.3: about 550 KB

/** The commit tag v1.8.3 names (what `coredns -version` reports as its commit). */
export const COREDNS_COMMIT = '4293992bb83a5eac1d1e617a40638db6db046283';

/** CoreDNS's config parser, packaged only in Debian sid (so pinned here, not taken from an index). */
export const CADDY_DEB: PinnedFile & { pool: string } = {
  name: 'golang-github-coredns-caddy-dev_1.1.1-1_all.deb',
  sha256: '15bfef924a98cbbcdba329df03fc6e29e918b9728689a471bd808a4ec28059b7',
  pool: 'pool/main/g/golang-github-coredns-caddy/golang-github-coredns-caddy-dev_1.1.1-1_all.deb',
  // A source-only library package: well under 1 MB.
  maxBytes: 4 * 1024 * 1024,
};

/** The plugins built in, in plugin.cfg's order (which is the order they act on a query): what a cluster's Corefile uses. */
export const COREDNS_PLUGINS = ['reload', 'ready', 'health', 'prometheus', 'errors', 'log', 'loadbalance', 'cache', 'kubernetes', 'loop', 'forward'] as const;

/** A Go library taken from a Debian package: its directory under usr/share/gocode/src, which is also its place in the GOPATH. */
export interface GoLibrary {
  package: string;
  dir: string;
}

/** Libraries CoreDNS needs that the Kubernetes tree lacks (or has too old), from the current Debian suite. */
export const DEBIAN_GO_LIBRARIES: readonly GoLibrary[] = [
  { package: 'golang-github-miekg-dns-dev', dir: 'github.com/miekg/dns' }, // replaces vendor/'s v1.1.4
  { package: 'golang-github-opentracing-opentracing-go-dev', dir: 'github.com/opentracing/opentracing-go' },
  { package: 'golang-github-grpc-ecosystem-grpc-opentracing-dev', dir: 'github.com/grpc-ecosystem/grpc-opentracing' },
  // forward imports plugin/dnstap, which needs dnstap and framestream.
  { package: 'golang-github-dnstap-golang-dnstap-dev', dir: 'github.com/dnstap/golang-dnstap' },
  { package: 'golang-github-farsightsec-golang-framestream-dev', dir: 'github.com/farsightsec/golang-framestream' },
  { package: 'golang-github-google-shlex-dev', dir: 'github.com/google/shlex' },
  // Only promauto, which vendor/'s client_golang 1.7.1 lacks; the rest of 1.14 would not fit it.
  { package: 'golang-github-prometheus-client-golang-dev', dir: 'github.com/prometheus/client_golang/prometheus/promauto' },
];

/** The caddy library, from CADDY_DEB. */
export const CADDY_LIBRARY: GoLibrary = { package: 'golang-github-coredns-caddy-dev', dir: 'github.com/coredns/caddy' };

/** Where a Debian Go package unpacks its sources. */
export const GOCODE = 'usr/share/gocode/src';

/**
 * Bump when the build's steps change (a new fix, other flags), so that a binary built by an
 * earlier recipe is not taken from the cache for this one.
 */
export const RECIPE_REVISION = 1;

/** plugin.cfg with only the `keep` plugins' lines (order and comments as they were); every one must be there. */
export function cutPluginCfg(text: string, keep: readonly string[] = COREDNS_PLUGINS): string {
  const found = new Set<string>();
  const lines = text.split('\n').filter((line) => {
    const name = /^\s*([A-Za-z0-9_]+):\S+\s*$/.exec(line)?.[1];
    if (name === undefined) return true; // comments and blank lines
    if (!keep.includes(name)) return false;
    found.add(name);
    return true;
  });
  const missing = keep.filter((p) => !found.has(p));
  if (missing.length > 0) throw new FailureError(`CoreDNS's plugin.cfg has no ${missing.join(', ')}`, 'the CoreDNS source is not v1.8.3; check dns.source');
  return lines.join('\n');
}

/**
 * plugin/kubernetes/setup.go with its "k8s.io/klog" import (v1, which the Kubernetes v1.20 tree no
 * longer carries) replaced by "k8s.io/klog/v2": the file only calls klog.SetOutput, which v2 has
 * with the same meaning, and v2 is still imported as klog.
 */
export function fixKlogImport(text: string): string {
  const fixed = text.replace(/^(\s*)"k8s\.io\/klog"$/m, '$1"k8s.io/klog/v2"');
  if (fixed === text) throw new FailureError('plugin/kubernetes/setup.go does not import "k8s.io/klog"', 'the CoreDNS source is not v1.8.3; check dns.source');
  return fixed;
}

/** One step of laying out the GOPATH: move `from` (relative to the work directory) to src/`to`, replacing whatever is there. */
export interface GopathMove {
  from: string;
  to: string;
}

/** What the GOPATH is made of, as found on disk (paths relative to the work directory). */
export interface GopathParts {
  /** The unpacked Kubernetes tree, e.g. src/kubernetes-1.20.2. */
  tree: string;
  /** The directories at the top of its vendor/ (github.com, k8s.io, ...). */
  vendorDirs: string[];
  /** vendor/k8s.io's links by name and target (api -> ../../staging/src/k8s.io/api). */
  k8sLinks: Record<string, string>;
  /** Each Debian library and the directory its package was unpacked into. */
  libraries: { library: GoLibrary; unpacked: string }[];
  /** The unpacked CoreDNS source, e.g. coredns-1.8.3. */
  coredns: string;
}

/**
 * The moves that make GOPATH/src, in order: vendor/'s directories; each k8s.io link replaced by the
 * staging/ directory it points at (a link's relative target would not resolve from the GOPATH);
 * the Debian libraries over them; CoreDNS at github.com/coredns/coredns.
 */
export function gopathPlan(parts: GopathParts): GopathMove[] {
  const moves: GopathMove[] = [...parts.vendorDirs].sort().map((d) => ({ from: posix.join(parts.tree, 'vendor', d), to: d }));
  for (const [name, target] of Object.entries(parts.k8sLinks).sort(([a], [b]) => (a < b ? -1 : 1))) {
    const inTree = posix.normalize(posix.join('vendor/k8s.io', target));
    if (!inTree.startsWith('staging/')) throw new FailureError(`vendor/k8s.io/${name} points at ${target}, outside the tree's staging/`, 'the Kubernetes source changed its layout; report it');
    moves.push({ from: posix.join(parts.tree, inTree), to: `k8s.io/${name}` });
  }
  for (const { library, unpacked } of parts.libraries) moves.push({ from: posix.join(unpacked, GOCODE, library.dir), to: library.dir });
  moves.push({ from: parts.coredns, to: 'github.com/coredns/coredns' });
  return moves;
}

/** Everything a CoreDNS build depends on: equal inputs give the same binary, so they key the cache. */
export interface CorednsInputs {
  archiveSha256: string;
  /** The SHA-256 of the Kubernetes source package's .dsc (which names every file's SHA-256). */
  kubernetesDsc: string;
  debs: { package: string; version: string; sha256: string }[];
  caddySha256: string;
  /** `go version` output. */
  goVersion: string;
  plugins: readonly string[];
  arch: string;
}

/** The cache key of a build: SHA-256 over every input (order-independent where order means nothing) and the recipe revision. */
export function buildKey(inputs: CorednsInputs): string {
  const canonical = {
    recipe: RECIPE_REVISION,
    archive: inputs.archiveSha256,
    kubernetesDsc: inputs.kubernetesDsc,
    debs: [...inputs.debs].sort((a, b) => (a.package < b.package ? -1 : 1)).map((d) => [d.package, d.version, d.sha256]),
    caddy: inputs.caddySha256,
    go: inputs.goVersion,
    plugins: [...inputs.plugins], // in order: the order is the plugin chain
    arch: inputs.arch,
  };
  return createHash('sha256').update(JSON.stringify(canonical)).digest('hex');
}
