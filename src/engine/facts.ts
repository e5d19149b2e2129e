// Facts: read-only questions to a machine, answered in ONE remote command per batch. Requests go
// on stdin (one per line) to a constant script, so the command line stays short whatever the
// number of files, and a fake transport can answer the same protocol in unit tests: the batch's
// probes also go to the transport by name and arguments (ExecOptions.probes), which the test
// machines answer by and a real transport ignores.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { joinCommands, sh, shellProgram, type Command } from '../shell.ts';
import type { Transport } from '../transport/types.ts';
import { isIssuedRequest, isProbeRequest, type Answer, type ProbeAnswer, type ProbeRequest, type ReadAnswer } from '../probes/probe.ts';
import { PROBES } from '../probes/index.ts';

/** A regular file's metadata; `sha256` is set by stat requests, `content` by read requests. */
export interface FileFact {
  path: string;
  exists: boolean;
  /** True if something exists at the path that is not a regular file (a directory, a socket). */
  notFile?: boolean;
  mode?: number;
  owner?: string;
  size?: number;
  sha256?: string;
  content?: Buffer;
  /** True if the file was larger than READ_LIMIT and its content was not fetched. */
  tooLarge?: boolean;
}

/** Output of one probe command: exit code and stdout (stderr is dropped; probes only read). */
export type ProbeResult = ProbeAnswer;

/** One answer of a batch: a file's, a machine's to a probe, or one a route other than the machine read already (src/cluster-api/). */
export type BatchAnswer = FileFact | ProbeResult | ReadAnswer;

/** Files larger than this are not read back (they are compared by SHA-256 only). */
export const READ_LIMIT = 1024 * 1024;

/** Files at least this large are hashed with `openssl dgst` where it works (see facts.sh). */
export const FAST_HASH_MIN = 1024 * 1024;

/**
 * Where a machine remembers the SHA-256 of its large files, keyed by path, size, inode and ctime:
 * a no-op rerun then hashes no binary again. An upload is a new inode (temp file + rename) and any
 * write changes the ctime, so a changed file never matches a remembered entry. Written only when
 * the run may change the machine (never under --dry-run).
 */
export const SHA_CACHE = '/var/lib/hardway/sha256.cache';

/** SHA-256 of "abc": openssl is used only if it answers this (not a stub, not a FIPS refusal). */
const SHA256_ABC = 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad';

/**
 * The batch script, src/engine/facts.sh (its header has the protocol: one request per stdin line,
 * one answer per stdout line). A shell program in a file of its own: `sh -n` checks it in a test,
 * and it reads as shell, not as a TypeScript string of escapes. Found from this file like
 * templates/ are, so the bundle in dist/cli reads the same file.
 */
export const FACTS_SCRIPT: Command = shellProgram(readFileSync(fileURLToPath(new URL('../../src/engine/facts.sh', import.meta.url)), 'utf8'));

/** One request of a batch: a file's metadata (S), content (R), a digest to remember (H), or a probe of the registry. */
export type FactRequest = { op: 'S' | 'R'; path: string } | { op: 'H'; path: string; sha256: string } | ProbeRequest;

/** The parsed answers of a record of probe requests, by the same keys. */
export type Answers<T extends Record<string, ProbeRequest>> = { [K in keyof T]: Answer<NonNullable<T[K]>> };

/** Read-only helpers bound to one machine's transport. */
export interface Facts {
  /** SHA-256, mode, owner and size of many files, in one remote command. */
  stat(paths: string[]): Promise<Map<string, FileFact>>;
  /** Content, mode, owner and size of many (text) files, in one remote command. Never for secrets. */
  read(paths: string[]): Promise<Map<string, FileFact>>;
  /** Asks probes of the registry in one remote command; their answers parsed, by the same keys. */
  ask<T extends Record<string, ProbeRequest>>(probes: T): Promise<Answers<T>>;
  /** A wait (a probe that asks until a service answers): on its own, for up to its time. */
  wait<R>(req: ProbeRequest<R>): Promise<R>;
  /**
   * Any mix of file requests and probes in one round trip; raw answers in request order (a probe's
   * reads with its `parse`; one a route other than the machine answered, ReadAnswer, is its value already).
   */
  batch(requests: FactRequest[]): Promise<BatchAnswer[]>;
  /**
   * Queues the SHA-256 of a large file this run has just uploaded: the next batch records it in
   * the machine's SHA cache for the file as it is then, so the re-plan does not hash it again.
   */
  remember(path: string, sha256: string): void;
}

/** Creates the facts helpers for a transport; `log` receives one line per request answered. */
export function createFacts(transport: Transport, log: (line: string) => void = () => {}, opts: { cacheWrites?: boolean; cacheFile?: string; probes?: ReadonlyMap<string, object> } = {}): Facts {
  const registry = opts.probes ?? PROBES;
  // Only requests the registry's own probes issued run: a probe made anywhere else, or a request
  // copied or made by hand (another command under a probe's name), is refused before anything is sent.
  const registered = (req: FactRequest) => {
    if ((req as { op: string }).op !== 'P') return;
    const asked = req as ProbeRequest;
    if (!isIssuedRequest(asked)) throw new Error(`"${asked.probe}": a probe request the registry did not issue (copied or made by hand) was refused (src/probes/index.ts)`);
    if (registry.get(asked.probe) !== asked.of) throw new Error(`"${asked.probe}" is not a probe of hardway's registry (src/probes/index.ts)`);
  };
  // The script's settings (see its header), then the script itself.
  const settings = sh`cache=${opts.cacheFile ?? SHA_CACHE}; fast_min=${FAST_HASH_MIN}; read_limit=${READ_LIMIT}; abc_sha256=${SHA256_ABC};`;
  // The line that closes a multi-line answer: random per run, so no probe's output holds it.
  const end = `--hardway-facts-end-${randomBytes(12).toString('hex')}`;
  const scriptFor = (blob: boolean) => joinCommands([opts.cacheWrites ? sh`${settings} end=${end}; write=1;` : sh`${settings} end=${end}; write=;`,
    blob ? sh`blob=1;` : sh`blob=;`, FACTS_SCRIPT], ' ');
  const script = scriptFor(true);
  const remembered: FactRequest[] = [];
  const batch = async (asked: FactRequest[], blob = true): Promise<Array<FileFact | ProbeResult>> => {
    if (asked.length === 0) return [];
    asked.forEach(registered);
    // Digests to remember go first, so this batch's own lookups already find them.
    const requests = [...remembered.splice(0), ...asked];
    const stdin = requests.map(encodeRequest).join('\n') + '\n';
    const r = await transport.exec(blob ? script : scriptFor(false), { stdin, logAs: `facts: ${requests.length} request(s)`, probes: requests.filter(isProbeRequest) });
    const lines = r.stdout.split('\n');
    const short = () => new Error(`${transport.machine}: reading facts failed (exit ${r.code}): ${r.stderr.trim() || 'short output'}`);
    if (r.code !== 0 || lines.length < requests.length) throw short();
    let at = 0;
    const inBlob: Array<{ req: FactRequest; fact: FileFact }> = [];
    const answers = requests.map((req) => {
      if (at >= lines.length) throw short();
      const line = lines[at++]!;
      // A multi-line probe answer: its lines as they are, up to the end line.
      const last = req.op === 'P' && /^\d+ [+-]$/.test(line) ? lines.indexOf(end, at) : -1;
      let answer: FileFact | ProbeResult;
      if (last >= 0) {
        answer = { code: Number(line.slice(0, -2)), stdout: lines.slice(at, last).join('\n') + (line.endsWith('+') ? '\n' : '') };
        at = last + 1;
      } else {
        answer = decodeAnswer(req, line);
        // Its content comes in the blob line: logged once it is there.
        if (req.op === 'R' && line.endsWith(' *')) return inBlob.push({ req, fact: answer as FileFact }), answer;
      }
      log(describeAnswer(req, answer));
      return answer;
    });
    if (inBlob.length > 0) {
      // The read files' bytes, one after the other, in the blob line after the last answer.
      const blobLine = lines[at];
      if (blobLine === undefined || !blobLine.startsWith('B ')) throw short();
      const bytes = Buffer.from(blobLine.slice(2), 'base64');
      if (bytes.length === inBlob.reduce((n, b) => n + b.fact.size!, 0)) {
        let from = 0;
        for (const { fact } of inBlob) fact.content = bytes.subarray(from, (from += fact.size!));
      } else {
        // A file changed between its stat and its read: ask those files again, each on its own.
        const again = await batch(inBlob.map((b) => b.req), false);
        inBlob.forEach((b, n) => Object.assign(b.fact, again[n]));
      }
      for (const { req, fact } of inBlob) log(describeAnswer(req, fact));
    }
    return answers.slice(requests.length - asked.length);
  };
  const wait: Facts['wait'] = async (req) => {
    registered(req);
    const r = await transport.exec(scriptFor(false), { stdin: encodeRequest(req) + '\n', logAs: `facts: wait ${req.probe}`, probes: [req], timeoutMs: (req.waitMs ?? 0) + WAIT_SLACK_MS });
    const lines = r.stdout.split('\n');
    if (r.code !== 0 || lines.length < 2) throw new Error(`${transport.machine}: waiting (${req.probe}) failed (exit ${r.code}): ${r.stderr.trim() || 'short output'}`);
    const last = /^\d+ [+-]$/.test(lines[0]!) ? lines.indexOf(end, 1) : -1;
    const answer = last >= 0 ? { code: Number(lines[0]!.slice(0, -2)), stdout: lines.slice(1, last).join('\n') + (lines[0]!.endsWith('+') ? '\n' : '') } : decodeAnswer(req, lines[0]!) as ProbeResult;
    log(describeAnswer(req, answer));
    return req.parse(answer);
  };
  return factsFrom(batch, wait, (path, sha256) => void remembered.push({ op: 'H', path, sha256 }));
}

/** A wait's command gets this much longer than its own limit before the transport gives up on it. */
const WAIT_SLACK_MS = 30_000;

/** The Facts helpers (stat, read, ask) over one batch function. */
export function factsFrom(batch: Facts['batch'], wait: Facts['wait'], remember: Facts['remember']): Facts {
  const files = async (op: 'S' | 'R', paths: string[]) => {
    const answers = await batch(paths.map((path) => ({ op, path })));
    return new Map(answers.map((a) => [(a as FileFact).path, a as FileFact]));
  };
  return {
    batch,
    wait,
    remember,
    stat: (paths) => files('S', paths),
    read: (paths) => files('R', paths),
    async ask(probes) {
      const keys = Object.keys(probes);
      const answers = await batch(keys.map((k) => probes[k]!));
      return Object.fromEntries(keys.map((k, i) => [k, probes[k]!.parse(answers[i] as ProbeResult)])) as Answers<typeof probes>;
    },
  };
}

/** Encodes one request as a stdin line (exported for the fake transport's tests). */
export function encodeRequest(req: FactRequest): string {
  if (isProbeRequest(req)) return /[\n\r]/.test(req.cmd.text) ? `P ${req.probe} ${Buffer.from(req.cmd.text).toString('base64')}` : `p ${req.probe} ${req.cmd.text}`;
  if (/[\n\r]/.test(req.path) || req.path === '') throw new Error(`unsupported path for facts: ${JSON.stringify(req.path)}`);
  if (req.op === 'H') {
    if (!/^[0-9a-f]{64}$/.test(req.sha256)) throw new Error(`not a SHA-256: ${JSON.stringify(req.sha256)}`);
    return `H ${req.sha256} ${req.path}`;
  }
  return `${req.op} ${req.path}`;
}

function decodeAnswer(req: FactRequest, line: string): FileFact | ProbeResult {
  if (isProbeRequest(req)) {
    const space = line.indexOf(' ');
    const answer = space < 0 ? '' : line.slice(space + 1);
    const stdout = answer.startsWith(':') ? `${answer.slice(1)}\n` : answer.startsWith(';') ? answer.slice(1) : Buffer.from(answer, 'base64').toString('utf8');
    return { code: Number(space < 0 ? line : line.slice(0, space)), stdout };
  }
  const parts = line.split(' ');
  const path = req.path;
  if (req.op === 'H') return { path, exists: parts[0] === 'K' };
  if (parts[0] === 'N') return { path, exists: false };
  if (parts[0] === 'D') return { path, exists: true, notFile: true };
  if (parts[0] !== 'F' || parts.length < 5) throw new Error(`cannot read ${path} (permission denied or unreadable)`);
  const fact: FileFact = { path, exists: true, mode: parseInt(parts[1]!, 8), owner: parts[2]!, size: Number(parts[3]) };
  if (req.op === 'S') fact.sha256 = parts[4]!;
  else if (parts[4] === '-') fact.tooLarge = true;
  // `*`: the content comes in the batch's blob line (the caller fills it in).
  else if (parts[4] !== '*') fact.content = Buffer.from(parts[4]!, 'base64');
  return fact;
}

function describeAnswer(req: FactRequest, a: FileFact | ProbeResult): string {
  if (isProbeRequest(req)) {
    const out = (a as ProbeResult).stdout.replace(/\n$/, '');
    return `probe ${req.probe} (exit ${(a as ProbeResult).code}): ${req.cmd.text}${out ? `\n--- stdout:\n${out.slice(0, 4000)}` : ''}`;
  }
  const f = a as FileFact;
  if (req.op === 'H') return `remember the SHA-256 of ${f.path} (just uploaded): ${f.exists ? 'done' : 'not there'}`;
  if (!f.exists) return `${req.op === 'S' ? 'stat' : 'read'} ${f.path}: missing`;
  if (f.notFile) return `${req.op === 'S' ? 'stat' : 'read'} ${f.path}: not a regular file`;
  return `${req.op === 'S' ? 'stat' : 'read'} ${f.path}: mode ${formatMode(f.mode!)} ${f.owner} ${f.size} bytes`;
}

/** A mode as the user writes it: 0644. */
export function formatMode(mode: number): string {
  return '0' + (mode & 0o7777).toString(8).padStart(3, '0');
}
