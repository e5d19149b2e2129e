// Debian source packages for `--source debian`: a private deb-src list in hardway's cache (the
// host's apt configuration is never touched: no lasting deb-src entry), the signed Sources index
// read with apt-cache, and `apt-get source --download-only`, each file then checked against the
// SHA-256 the index gives before anything uses it, and kept in the download cache under it.
import { mkdir, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { FailureError } from '../errors.ts';
import { cacheTempPath, commitToCache, findVerified, hashFile } from './cache.ts';
import { hostMirror } from './apt.ts';
import { runLocal } from '../transport/local.ts';

/** apt options that point apt at hardway's own deb-src list, lists and cache. */
export interface AptSourceContext {
  options: string[];
}

/** One file of a source package, as the signed index lists it. */
export interface SourceFile {
  name: string;
  sha256: string;
  size: number;
}

/** A source package's candidate in the index. */
export interface SourcePackage {
  package: string;
  version: string;
  files: SourceFile[];
  /** The .dsc entry: its checksum identifies this exact source. */
  dsc: SourceFile;
}

/** The private lists are refreshed after this long (a stale index may name removed files). */
const LIST_MAX_AGE_MS = 24 * 3600 * 1000;
const KEYRING = '/usr/share/keyrings/debian-archive-keyring.gpg';

/** Prepares (and refreshes when stale) hardway's private deb-src index under `root`. */
export async function aptSourceFor(root: string, suite: string, mirror = hostMirror()): Promise<AptSourceContext> {
  const lists = join(root, 'lists');
  const cache = join(root, 'cache');
  const sourceList = join(root, 'sources.list');
  const line = `deb-src [signed-by=${KEYRING}] ${mirror} ${suite} main\n`;
  const options = [
    '-o', `Dir::Etc::SourceList=${sourceList}`, '-o', 'Dir::Etc::SourceParts=/dev/null',
    '-o', `Dir::State::Lists=${lists}`, '-o', `Dir::Cache=${cache}`,
    // No binary caches: apt would rebuild them on every call (seconds); without them a look-up is 0.3 s.
    '-o', 'Dir::Cache::pkgcache=', '-o', 'Dir::Cache::srcpkgcache=',
  ];
  await mkdir(join(lists, 'partial'), { recursive: true });
  await mkdir(join(cache, 'archives', 'partial'), { recursive: true });
  await writeFile(sourceList, line);
  if (await staleLists(lists)) await runLocal('apt-get', ['-q', ...options, 'update']);
  return { options };
}

async function staleLists(lists: string): Promise<boolean> {
  const names = (await readdir(lists).catch(() => [] as string[])).filter((n) => n.includes('_Sources'));
  if (names.length === 0) return true;
  const st = await stat(join(lists, names[0]!));
  return Date.now() - st.mtimeMs > LIST_MAX_AGE_MS;
}

/** The candidate source package `name` from the signed index. */
export async function showSource(apt: AptSourceContext, name: string): Promise<SourcePackage> {
  const r = await runLocal('apt-cache', [...apt.options, 'showsrc', '--only-source', name]);
  const pkg = parseSourceStanzas(r.stdout).filter((p) => p.package === name).sort((a, b) => (a.version < b.version ? 1 : -1))[0];
  if (!pkg) throw new FailureError(`the Debian index has no source package ${name}`, 'check the network to the Debian mirror and run the command again');
  return pkg;
}

/** Parses `apt-cache showsrc` output: package, version and the Checksums-Sha256 files of each stanza. */
export function parseSourceStanzas(text: string): SourcePackage[] {
  const out: SourcePackage[] = [];
  for (const stanza of text.split(/\n\s*\n/)) {
    const pkg = /^Package:\s*(\S+)/m.exec(stanza)?.[1];
    const version = /^Version:\s*(\S+)/m.exec(stanza)?.[1];
    const block = /^Checksums-Sha256:\n((?:[ \t]+.*\n?)+)/m.exec(stanza)?.[1] ?? '';
    const files = block.split('\n').map((l) => l.trim().split(/\s+/)).filter((f) => f.length === 3 && /^[0-9a-f]{64}$/.test(f[0]!))
      .map(([sha256, size, name]) => ({ sha256: sha256!, size: Number(size), name: name! }));
    const dsc = files.find((f) => f.name.endsWith('.dsc'));
    if (pkg && version && dsc) out.push({ package: pkg, version, files, dsc });
  }
  return out;
}

/**
 * The source package's files, each verified against the index's SHA-256 and kept in the download
 * cache under it: files already cached are taken from there; the others are fetched with one
 * `apt-get source --download-only` into a temp directory of the cache. Returns name -> cached path.
 */
export async function fetchSource(apt: AptSourceContext, pkg: SourcePackage, cache: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const f of pkg.files) {
    const cached = await findVerified(cache, 'sha256', f.sha256);
    if (cached) out.set(f.name, cached);
  }
  if (out.size === pkg.files.length) return out;
  const temp = await cacheTempPath(cache, `source-${pkg.package}`);
  try {
    await mkdir(temp);
    await runLocal('apt-get', ['-q', ...apt.options, 'source', '--download-only', `${pkg.package}=${pkg.version}`], { cwd: temp });
    for (const f of pkg.files.filter((x) => !out.has(x.name))) {
      const actual = await hashFile(join(temp, f.name), 'sha256').catch(() => 'no file written');
      if (actual !== f.sha256) {
        throw new FailureError(
          `checksum mismatch for ${f.name}\n  expected: sha256:${f.sha256} (signed Sources index)\n  actual:   ${actual}`,
          'run the command again; if it persists, the mirror serves a damaged file',
        );
      }
      out.set(f.name, await commitToCache(cache, join(temp, f.name), f.sha256));
    }
    return out;
  } finally {
    await rm(temp, { recursive: true, force: true });
  }
}
