// The Kubernetes tree from Debian's `kubernetes` source package, the one way hardway gets it: the
// candidate in hardway's private deb-src index (identified by its .dsc's SHA-256), its files
// verified against the signed index and cached, and the upstream tarball unpacked. The Kubernetes
// build compiles the whole tree; the CoreDNS build takes client-go and the libraries in vendor/.
import { existsSync, readFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { FailureError } from '../errors.ts';
import { aptSourceFor, fetchSource, showSource, type AptSourceContext, type SourcePackage } from './apt-source.ts';
import { runLocal } from '../transport/local.ts';

/** The Debian source package that carries the Kubernetes tree. */
export const KUBERNETES_SOURCE = 'kubernetes';

/** The current Kubernetes source package in the signed index, and the apt context that reads it. */
export interface KubernetesSource {
  apt: AptSourceContext;
  pkg: SourcePackage;
  /** The upstream release it carries, e.g. v1.20.2. */
  version: string;
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

/** Looks up the Kubernetes source package of this machine's Debian suite (index in `cacheRoot`/apt-source). */
export async function kubernetesSource(cacheRoot: string): Promise<KubernetesSource> {
  const apt = await aptSourceFor(join(cacheRoot, 'apt-source'), debianSuite());
  const pkg = await showSource(apt, KUBERNETES_SOURCE);
  return { apt, pkg, version: upstreamVersion(pkg.version) };
}

/**
 * Fetches (or takes from the download cache) the verified source files and unpacks the upstream
 * tarball into `dir`: all of it, or only `members` (paths inside the tree, e.g. 'vendor').
 * Returns the tree's directory, kubernetes-<version>.
 */
export async function unpackKubernetesSource(src: KubernetesSource, dir: string, cache: string, log: (line: string) => void, members?: string[]): Promise<string> {
  const files = await fetchSource(src.apt, src.pkg, cache);
  log(`  Debian source package ${src.pkg.package} ${src.pkg.version}: files verified against the signed index (sha256 of ${src.pkg.dsc.name}: ${src.pkg.dsc.sha256})`);
  const orig = src.pkg.files.find((f) => f.name.includes('.orig.tar'));
  if (!orig) throw new FailureError(`the source package ${src.pkg.package} ${src.pkg.version} has no .orig.tar file`, 'the source package changed its layout; report it');
  const top = `kubernetes-${src.version.slice(1)}`;
  await mkdir(dir, { recursive: true });
  await runLocal('tar', ['-xf', files.get(orig.name)!, '-C', dir, '--no-same-owner', ...(members ?? []).map((m) => `${top}/${m}`)]);
  const tree = join(dir, top);
  const expected = members ?? ['Makefile'];
  const absent = expected.filter((m) => !existsSync(join(tree, m)));
  if (absent.length > 0) throw new FailureError(`${orig.name} has no ${absent.map((m) => `${top}/${m}`).join(', ')}`, 'the source package changed its layout; report it');
  return tree;
}

/** The Debian suite of this machine (its codename), whose source package is built. */
export function debianSuite(): string {
  try {
    return /^VERSION_CODENAME=(\S+)/m.exec(readFileSync('/etc/os-release', 'utf8'))?.[1] ?? 'bookworm';
  } catch {
    return 'bookworm';
  }
}
