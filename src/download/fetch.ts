// Fetching one release file into the cache: stream to a temp file while hashing, compare with the
// published digest, and only then rename into the cache. Any failure removes the temp file.
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { FailureError } from '../errors.ts';
import { maskCredentials } from '../url.ts';
import { cacheTempPath, commitToCache, findVerified, removedOnExit } from './cache.ts';
import { byteSize, pathError } from '../input-file.ts';
import type { Progress } from './progress.ts';

/** What to fetch and how to verify it. */
export interface FetchRequest {
  url: string;
  algorithm: 'sha256' | 'sha512';
  hex: string;
  /** What to tell the user when the download fails or its digest differs (defaults: the release files'). */
  hints?: { failed?: string; mismatch?: string };
  /** The most bytes the file can be (known for a pinned file): a bigger answer is refused or cut short. */
  maxBytes?: number;
  /** Milliseconds the whole download may take, however slowly the bytes come (a drip). */
  deadlineMs?: number;
}

/** The result: where the verified file is, and whether the network was used. */
export interface FetchResult {
  path: string;
  fromCache: boolean;
}

/** Milliseconds without a byte before a download is given up. */
const IDLE_TIMEOUT_MS = 60_000;

/** Returns a verified cached copy, or downloads, verifies and caches the file. */
export async function fetchVerified(req: FetchRequest, cache: string, progress: Progress): Promise<FetchResult> {
  const cached = await findVerified(cache, req.algorithm, req.hex);
  if (cached) return { path: cached, fromCache: true };
  const name = basename(new URL(req.url).pathname) || 'download';
  const temp = await cacheTempPath(cache, name);
  // Ctrl-C or SIGTERM exits through process.exit: the finally below would not run.
  const kept = removedOnExit(temp);
  try {
    const actual = await downloadTo(req, temp, name, progress);
    if (actual !== req.hex) {
      throw new FailureError(
        `checksum mismatch for ${name}\n  url:      ${maskCredentials(req.url)}\n  expected: ${req.algorithm}:${req.hex}\n  actual:   ${req.algorithm}:${actual}`,
        req.hints?.mismatch ?? 'the file was discarded; if the publisher changed it, verify the new digest and update src/download/versions.json',
      );
    }
    return { path: await commitToCache(cache, temp, req.hex), fromCache: false };
  } finally {
    await rm(temp, { force: true });
    kept();
  }
}

async function downloadTo(req: FetchRequest, dest: string, name: string, progress: Progress): Promise<string> {
  const { url, algorithm, maxBytes } = req;
  const abort = new AbortController();
  let idle = setTimeout(() => abort.abort(new Error(`no data for ${IDLE_TIMEOUT_MS / 1000} s`)), IDLE_TIMEOUT_MS);
  const touch = () => {
    clearTimeout(idle);
    idle = setTimeout(() => abort.abort(new Error(`no data for ${IDLE_TIMEOUT_MS / 1000} s`)), IDLE_TIMEOUT_MS);
  };
  // A drip resets the idle timer with every byte: the deadline holds whatever the pace.
  const deadline = req.deadlineMs === undefined ? undefined
    : setTimeout(() => abort.abort(new Error(`not complete within ${req.deadlineMs! / 1000} s`)), req.deadlineMs);
  const fail = (why: string) =>
    new FailureError(`download of ${name} failed: ${maskCredentials(why)}\n  url: ${maskCredentials(url)}`,
      req.hints?.failed ?? 'check the network (or the mirror in HARDWAY_DOWNLOAD_BASE_URL); machines without internet access can use --source debian');
  let started = false;
  try {
    let res: Response;
    try {
      res = await fetch(url, { signal: abort.signal, redirect: 'follow' });
    } catch (e) {
      throw fail(describe(e));
    }
    if (!res.ok || !res.body) throw fail(`HTTP ${res.status} ${res.statusText}`);
    const lengthHeader = res.headers.get('content-length');
    const total = lengthHeader ? Number(lengthHeader) : undefined;
    if (maxBytes !== undefined && total !== undefined && total > maxBytes) {
      await res.body.cancel();
      throw fail(`the server announces ${byteSize(total)}, more than the ${byteSize(maxBytes)} this file can be`);
    }
    const hash = createHash(algorithm);
    let got = 0;
    progress.start(name, total);
    started = true;
    const body = Readable.fromWeb(res.body as import('node:stream/web').ReadableStream<Uint8Array>);
    // Hashed as it streams to the cache's temp file: one pass, and what is hashed is what was written.
    const tap = new Transform({
      transform(chunk: Buffer, _enc, done) {
        touch();
        got += chunk.length;
        if (maxBytes !== undefined && got > maxBytes) return done(new Error(`more than the ${byteSize(maxBytes)} this file can be`));
        if (total !== undefined && got > total) return done(new Error(`more than the ${total} bytes the server announced`));
        hash.update(chunk);
        progress.advance(chunk.length);
        done(null, chunk);
      },
    });
    const out = createWriteStream(dest, { mode: 0o600 });
    let writeError: unknown;
    out.on('error', (e) => (writeError ??= e));
    try {
      await pipeline(body, tap, out);
    } catch (e) {
      // A full or read-only cache disk is the cache's problem, named as such, not the network's.
      const local = writeError === undefined ? undefined : pathError(writeError, `${dirname(dest)} (hardway's download cache)`);
      if (local) throw local;
      throw fail(`${describe(e)} after ${got} bytes`);
    }
    if (total !== undefined && got !== total) throw fail(`got ${got} of ${total} bytes`);
    return hash.digest('hex');
  } finally {
    clearTimeout(idle);
    clearTimeout(deadline);
    if (started) progress.end();
  }
}

function describe(e: unknown): string {
  const err = e as Error & { cause?: Error & { code?: string } };
  const cause = err?.cause;
  if (cause?.message) return `${err.message} (${cause.code ? `${cause.code}: ` : ''}${cause.message})`;
  return err?.message ?? String(e);
}
