// Where the CoreDNS build's pinned inputs come from, each verified by its pinned SHA-256 before
// anything uses it and then kept in the download cache under it. The source archive: dns.source of
// cluster.yaml (a path relative to the project directory, or an http(s) URL), else the cache. The
// caddy .deb (Debian sid only): the cache, else a file of its name beside the dns.source archive,
// else the sid pool of the host's Debian mirror. A file whose SHA-256 differs is refused and
// nothing of it is cached.
import { readFileSync } from 'node:fs';
import { copyFile, rm } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { isMap, LineCounter, parseDocument } from 'yaml';
import { FailureError, InputError, PreconditionError, type Location } from '../errors.ts';
import { hostMirror } from '../download/apt.ts';
import { cachePath, cacheTempPath, commitToCache, findVerified, hashFile } from '../download/cache.ts';
import { fetchVerified } from '../download/fetch.ts';
import type { Progress } from '../download/progress.ts';
import { statPath, kindOf } from '../input-file.ts';
import { localSourcePath } from './source-path.ts';
import { CADDY_DEB, COREDNS_ARCHIVE, COREDNS_COMMIT, COREDNS_VERSION, type PinnedFile } from './coredns-recipe.ts';

/** A verified input in the cache, and a line saying where it came from. */
export interface Obtained {
  path: string;
  said: string;
}

/** Everything the look-ups need, passed in; the pins default to the real files (tests pass their own). */
export interface InputOptions {
  projectDir: string;
  /** dns.source of cluster.yaml, as written there; unset: the cache only. */
  source?: string;
  /** The home directory a `~/` in dns.source stands for (default: this user's). */
  home?: string;
  /** cluster.yaml's path (read for the line of dns.source in messages) and how the user sees it. */
  clusterFile: string;
  clusterShown: string;
  /** The download cache. */
  cache: string;
  progress: Progress;
  /** The Debian mirror whose sid pool has the caddy .deb (default: the host's). */
  mirror?: string;
  archivePin?: PinnedFile;
  caddyPin?: PinnedFile & { pool: string };
}

/** Where one gets the archive, for the hints. */
const HOW_TO_GET = `the archive "git archive --prefix=coredns-1.8.3/ ${COREDNS_VERSION} | gzip -n" of github.com/coredns/coredns (tag commit ${COREDNS_COMMIT}), made on a machine with internet access`;

const isUrl = (s: string) => /^https?:\/\//.test(s);

/** The CoreDNS source archive, verified: from dns.source (a file or a URL), else from the cache. */
export async function corednsSourceArchive(opts: InputOptions): Promise<Obtained> {
  const pin = opts.archivePin ?? COREDNS_ARCHIVE;
  const label = `CoreDNS ${COREDNS_VERSION} source archive`;
  if (opts.source === undefined) {
    const cached = await findVerified(opts.cache, 'sha256', pin.sha256);
    if (cached) return { path: cached, said: `${label}: cached, sha256 verified` };
    throw new PreconditionError(
      `no ${label}: dns.source is not set in ${opts.clusterShown} and hardway's cache has none (sha256 ${pin.sha256})`,
      `set dns.source in cluster.yaml to the CoreDNS ${COREDNS_VERSION} source archive, a path relative to the project directory or an http(s) URL: ${HOW_TO_GET}`,
    );
  }
  if (isUrl(opts.source)) {
    const r = await fetchVerified({
      url: opts.source, algorithm: 'sha256', hex: pin.sha256,
      hints: {
        failed: `check dns.source in ${opts.clusterShown}, or set it to a copy of the archive on this machine: ${HOW_TO_GET}`,
        mismatch: `the file was refused and nothing was cached: dns.source must be ${HOW_TO_GET}`,
      },
    }, opts.cache, opts.progress);
    return { path: r.path, said: `${label}: ${r.fromCache ? 'cached' : `downloaded from ${opts.source}`}, sha256 verified` };
  }
  const where = sourceLine(opts);
  const file = localSourcePath(opts.source, opts.projectDir, opts.home ?? homedir(), where);
  const hint = `dns.source is the CoreDNS ${COREDNS_VERSION} source archive, a path relative to the project directory (${opts.projectDir}) or an http(s) URL: ${HOW_TO_GET}`;
  const st = atLine(() => statPath(file, file, hint), where);
  if (st === undefined) throw new InputError(`dns.source: ${file} does not exist`, hint, where);
  if (!st.isFile()) throw new InputError(`dns.source: ${file} is ${kindOf(st)}, not a file`, hint, where);
  const cached = await findVerified(opts.cache, 'sha256', pin.sha256);
  // The named file is checked even when the cache has the archive: a wrong dns.source is an error
  // on every machine, not only on one whose cache is empty.
  const copy = await cacheLocalFile(file, pin, opts.cache, !cached);
  if ('actual' in copy) {
    throw new InputError(
      `dns.source: ${file} is not the CoreDNS ${COREDNS_VERSION} source archive, refused\n  expected: sha256:${pin.sha256} (${pin.name}, pinned in hardway)\n  actual:   sha256:${copy.actual}`,
      `nothing was cached; ${hint}`, where,
    );
  }
  return { path: copy.path, said: `${label}: ${cached ? 'cached' : `copied into the cache from ${file}`}, sha256 verified` };
}

/** The caddy .deb, verified: from the cache, else beside the dns.source archive, else Debian sid's pool. */
export async function caddyDeb(opts: InputOptions): Promise<Obtained> {
  const pin = opts.caddyPin ?? CADDY_DEB;
  const label = `${pin.name} (Debian sid, pinned)`;
  const cached = await findVerified(opts.cache, 'sha256', pin.sha256);
  if (cached) return { path: cached, said: `${label}: cached, sha256 verified` };
  if (opts.source !== undefined && !isUrl(opts.source)) {
    const beside = join(dirname(localSourcePath(opts.source, opts.projectDir, opts.home ?? homedir(), sourceLine(opts))), pin.name);
    if (statPath(beside, beside, 'remove it or replace it with the Debian package of that name')?.isFile()) {
      const copy = await cacheLocalFile(beside, pin, opts.cache, true);
      if ('actual' in copy) {
        throw new FailureError(
          `${beside} is not Debian's ${pin.name}, refused\n  expected: sha256:${pin.sha256} (pinned in hardway)\n  actual:   sha256:${copy.actual}`,
          'nothing was cached; replace it with the package from Debian sid, or remove it (hardway then fetches it from the mirror)',
        );
      }
      return { path: copy.path, said: `${label}: copied into the cache from ${beside}, sha256 verified` };
    }
  }
  const url = `${(opts.mirror ?? hostMirror()).replace(/\/+$/, '')}/${pin.pool}`;
  const r = await fetchVerified({
    url, algorithm: 'sha256', hex: pin.sha256,
    hints: {
      failed: `Debian sid may have replaced it with a newer version: put ${pin.name} (sha256 ${pin.sha256}) beside the archive dns.source names`,
      mismatch: 'the file was refused and nothing was cached: the mirror serves other bytes under this name',
    },
  }, opts.cache, opts.progress);
  return { path: r.path, said: `${label}: downloaded from ${url}, sha256 verified` };
}

/**
 * Copies `file` into the cache under its pinned SHA-256 if its bytes hash to it (`keep` false:
 * only checks). The hash is of the copy, so what is cached is exactly what was checked.
 */
async function cacheLocalFile(file: string, pin: PinnedFile, cache: string, keep: boolean): Promise<{ path: string } | { actual: string }> {
  const temp = await cacheTempPath(cache, pin.name);
  try {
    await copyFile(file, temp);
    const actual = await hashFile(temp, 'sha256');
    if (actual !== pin.sha256) return { actual };
    return { path: keep ? await commitToCache(cache, temp, pin.sha256) : cachePath(cache, pin.sha256) };
  } finally {
    await rm(temp, { force: true });
  }
}

/** Where dns.source is written: cluster.yaml as the user sees it, and the line when it can be read. */
function sourceLine(opts: InputOptions): Location {
  return { file: opts.clusterShown, ...lineOf(opts.clusterFile, ['dns', 'source']) };
}

/** Runs `fn`; an InputError it throws without a place (a link to nothing, say) gets `where`. */
function atLine<T>(fn: () => T, where: Location): T {
  try {
    return fn();
  } catch (e) {
    if (e instanceof InputError && e.where === undefined) throw new InputError(e.message, e.hint, where);
    throw e;
  }
}

/** The line of a nested key in a YAML file ({} when the file or key cannot be read). */
function lineOf(file: string, keys: string[]): { line?: number } {
  try {
    const counter = new LineCounter();
    let node: unknown = parseDocument(readFileSync(file, 'utf8'), { lineCounter: counter }).contents;
    let start: number | undefined;
    for (const key of keys) {
      if (!isMap(node)) return {};
      const pair = node.items.find((p) => String((p.key as { value?: unknown })?.value ?? p.key) === key);
      if (!pair) return {};
      start = (pair.key as { range?: [number, number, number] })?.range?.[0];
      node = pair.value;
    }
    return start === undefined ? {} : { line: counter.linePos(start).line };
  } catch {
    return {};
  }
}
