// apt for `--source debian`: find a package's candidate in the signed index (version, SHA-256) and
// fetch its .deb with `apt-get download`, for the machines' architecture. For an architecture dpkg
// does not know on this machine, apt gets a private package list in the cache, so the jumpbox's
// own apt configuration is never changed.
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, readdir, stat } from 'node:fs/promises';
import { ensureCacheDir } from './cache-dir.ts';
import { join } from 'node:path';
import { FailureError } from '../errors.ts';
import { runLocal, tryLocal } from '../transport/local.ts';

/** A package as the apt index describes it. */
export interface DebInfo {
  package: string;
  version: string;
  arch: string;
  sha256: string;
  filename: string;
}

/** apt options that select the architecture; empty when the system lists already cover it. */
export interface AptContext {
  arch: string;
  options: string[];
}

/** Private lists are refreshed after this long, so a stale index does not point at removed .debs. */
const LIST_MAX_AGE_MS = 24 * 3600 * 1000;

/** Prepares apt for an architecture: system lists if dpkg knows it, else a private list in `listsRoot`. */
export async function aptFor(arch: string, listsRoot: string): Promise<AptContext> {
  const native = (await runLocal('dpkg', ['--print-architecture'])).stdout.trim();
  const foreign = (await tryLocal`dpkg --print-foreign-architectures`).stdout.split('\n').map((s) => s.trim());
  if (arch === native || foreign.includes(arch)) return { arch, options: [] };
  const lists = join(listsRoot, arch);
  const options = ['-o', `Dir::State::Lists=${lists}`, '-o', `APT::Architectures::=${native}`, '-o', `APT::Architectures::=${arch}`];
  if (await stale(lists)) {
    await ensureCacheDir(join(lists, 'partial'));
    await runLocal('apt-get', ['-q', ...options, 'update']);
  }
  return { arch, options };
}

async function stale(lists: string): Promise<boolean> {
  try {
    const names = (await readdir(lists)).filter((n) => n.endsWith('_Packages') || n.includes('_Packages.'));
    if (names.length === 0) return true;
    const st = await stat(join(lists, names[0]!));
    return Date.now() - st.mtimeMs > LIST_MAX_AGE_MS;
  } catch {
    return true;
  }
}

/**
 * The candidate of each package for the context's architecture, from one apt-cache call (apt
 * rebuilds its cache on every call here, seconds each). Packages apt does not know are absent.
 */
export async function showPackages(apt: AptContext, names: readonly string[]): Promise<Map<string, DebInfo>> {
  const r = await tryLocal`apt-cache ${[...apt.options, 'show', '--no-all-versions', ...names.map((n) => `${n}:${apt.arch}`)]}`;
  const out = new Map<string, DebInfo>();
  for (const stanza of r.stdout.split(/\n\s*\n/)) {
    const fields = new Map<string, string>();
    for (const line of stanza.split('\n')) {
      const m = /^([A-Za-z0-9-]+):\s*(.*)$/.exec(line);
      if (m) fields.set(m[1]!, m[2]!);
    }
    const name = fields.get('Package');
    if (!name || !names.includes(name) || out.has(name)) continue;
    const version = fields.get('Version');
    const sha256 = fields.get('SHA256');
    if (!version || !sha256 || !/^[0-9a-f]{64}$/.test(sha256)) {
      throw new FailureError(`apt-cache show ${name}:${apt.arch} gave no Version or SHA256`, 'run "apt-get update" and try again');
    }
    out.set(name, { package: name, version, arch: fields.get('Architecture') ?? apt.arch, sha256, filename: fields.get('Filename') ?? '' });
  }
  return out;
}

/** Runs one `apt-get download NAME:ARCH=VERSION...` in `dir` and returns the .deb files it wrote. */
export async function aptDownload(apt: AptContext, infos: readonly DebInfo[], dir: string): Promise<string[]> {
  await mkdir(dir, { recursive: true });
  await runLocal('apt-get', ['-q', ...apt.options, 'download', ...infos.map((i) => `${i.package}:${apt.arch}=${i.version}`)], { cwd: dir });
  return (await readdir(dir)).filter((n) => n.endsWith('.deb')).map((n) => join(dir, n));
}

/** The Debian mirror apt on this host uses (deb822 or one-line sources), else deb.debian.org. */
export function hostMirror(sources: string[] = ['/etc/apt/sources.list.d/debian.sources', '/etc/apt/sources.list']): string {
  for (const file of sources) {
    if (!existsSync(file)) continue;
    const text = readFileSync(file, 'utf8');
    const deb822 = text.split(/\n\s*\n/).find((b) => /^Suites:.*\bbookworm\b/m.test(b) && !/security/.test(b));
    const uri = deb822 ? /^URIs:\s*(\S+)/m.exec(deb822)?.[1] : /^deb\s+(?:\[[^\]]*\]\s+)?(\S+)\s+bookworm\s/m.exec(text)?.[1];
    if (uri && /^https?:\/\//.test(uri)) return uri;
  }
  return 'http://deb.debian.org/debian';
}
