// Where the CoreDNS build's pinned inputs come from, each verified by its pinned SHA-256 before
// anything uses it and then kept in the download cache under it. The source archive: dns.source of
// cluster.yaml (a path relative to the project directory, or an http(s) URL), else the cache. The
// caddy .deb (Debian sid only): the cache, else a file of its name beside the dns.source archive,
// else the sid pool of the host's Debian mirror. A file whose SHA-256 differs is refused and
// nothing of it is cached.
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { homedir } from 'node:os';
import { Transform, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { dirname, join } from 'node:path';
import { isMap, LineCounter, parseDocument } from 'yaml';
import { FailureError, InputError, PreconditionError, type Location } from '../errors.ts';
import { hostMirror } from '../download/apt.ts';
import { cachePath, cacheTempPath, commitToCache, findVerified, removedOnExit } from '../download/cache.ts';
import { fetchVerified } from '../download/fetch.ts';
import type { Progress } from '../download/progress.ts';
import { byteSize, namedFile, pathError } from '../input-file.ts';
import { maskCredentials } from '../url.ts';
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

/** How long a pinned input's download may take in all (each is a few hundred KB): a drip is given up. */
const PINNED_DOWNLOAD_MS = 120_000;
/** The most bytes read of a pinned input whose pin gives no size. */
const PINNED_MAX_BYTES = 64 * 1024 * 1024;

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
      url: opts.source, algorithm: 'sha256', hex: pin.sha256, maxBytes: pin.maxBytes, deadlineMs: PINNED_DOWNLOAD_MS,
      hints: {
        failed: `check dns.source in ${opts.clusterShown}, or set it to a copy of the archive on this machine: ${HOW_TO_GET}`,
        mismatch: `the file was refused and nothing was cached: dns.source must be ${HOW_TO_GET}`,
      },
    }, opts.cache, opts.progress);
    return { path: r.path, said: `${label}: ${r.fromCache ? 'cached' : `downloaded from ${maskCredentials(opts.source)}`}, sha256 verified` };
  }
  const where = sourceLine(opts);
  const file = localSourcePath(opts.source, opts.projectDir, opts.home ?? homedir(), where);
  const hint = `dns.source is the CoreDNS ${COREDNS_VERSION} source archive, a path relative to the project directory (${opts.projectDir}) or an http(s) URL: ${HOW_TO_GET}`;
  // A regular file no bigger than the archive can be: a pipe or /dev/zero is refused before it is opened.
  if (namedFile(`dns.source: ${file}`, file, hint, where, pin.maxBytes ?? PINNED_MAX_BYTES) === undefined) {
    throw new InputError(`dns.source: ${file} does not exist`, hint, where);
  }
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
    if (namedFile(beside, beside, 'remove it or replace it with the Debian package of that name', undefined, pin.maxBytes ?? PINNED_MAX_BYTES)) {
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
    url, algorithm: 'sha256', hex: pin.sha256, maxBytes: pin.maxBytes, deadlineMs: PINNED_DOWNLOAD_MS,
    hints: {
      failed: `Debian sid may have replaced it with a newer version: put ${pin.name} (sha256 ${pin.sha256}) beside the archive dns.source names`,
      mismatch: 'the file was refused and nothing was cached: the mirror serves other bytes under this name',
    },
  }, opts.cache, opts.progress);
  return { path: r.path, said: `${label}: downloaded from ${maskCredentials(url)}, sha256 verified` };
}

/**
 * Copies `file` into the cache under its pinned SHA-256 if its bytes hash to it (`keep` false:
 * only checks, nothing written). Hashed as it streams, in one pass: what is cached is exactly
 * what was hashed. A write that fails (a full cache disk) names the cache, a read the file.
 */
async function cacheLocalFile(file: string, pin: PinnedFile, cache: string, keep: boolean): Promise<{ path: string } | { actual: string }> {
  const max = pin.maxBytes ?? PINNED_MAX_BYTES;
  const hash = createHash('sha256');
  let got = 0;
  const tap = new Transform({
    transform(chunk: Buffer, _enc, done) {
      got += chunk.length;
      // The file grew since it was checked.
      if (got > max) return done(new InputError(`${file} is more than the ${byteSize(max)} ${pin.name} can be`));
      hash.update(chunk);
      done(null, chunk);
    },
  });
  const input = createReadStream(file);
  let readError: unknown;
  input.on('error', (e) => (readError ??= e));
  const temp = keep ? await cacheTempPath(cache, pin.name) : undefined;
  // Ctrl-C or SIGTERM exits through process.exit: the finally below would not run.
  const kept = temp ? removedOnExit(temp) : () => {};
  try {
    try {
      await pipeline(input, tap, temp ? createWriteStream(temp, { mode: 0o600 }) : new Writable({ write: (_c, _e, done) => done() }));
    } catch (e) {
      if (e instanceof InputError) throw e;
      throw (readError !== undefined ? pathError(readError, file) : pathError(e, `${cache} (hardway's download cache)`)) ?? e;
    }
    const actual = hash.digest('hex');
    if (actual !== pin.sha256) return { actual };
    return { path: temp ? await commitToCache(cache, temp, pin.sha256) : cachePath(cache, pin.sha256) };
  } finally {
    if (temp) await rm(temp, { force: true });
    kept();
  }
}

/** Where dns.source is written: cluster.yaml as the user sees it, and the line when it can be read. */
function sourceLine(opts: InputOptions): Location {
  return { file: opts.clusterShown, ...lineOf(opts.clusterFile, ['dns', 'source']) };
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
