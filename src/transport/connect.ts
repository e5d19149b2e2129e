// Opening one SSH connection to a machine, through its jump hosts if any: host keys checked
// against known_hosts on every hop, auth offered, failures classified so that only network
// failures are retried (never authentication or host-key refusals).
// ssh2 is CommonJS: Node's ESM loader sees only its default export (named imports work under vitest only).
import ssh2, { type Client as SshClient, type ServerHostKeyAlgorithm } from 'ssh2';
import { createConnection } from 'node:net';
import type { Readable } from 'node:stream';

const { Client } = ssh2;
type Client = SshClient;
import { authOffer } from './auth.ts';
import { batchWrites } from './batched-writes.ts';
import type { Endpoint, Route } from './endpoint.ts';
import { AuthError, ConnectError, HostKeyError, TransportError } from './errors.ts';
import { fingerprint, keyTypeOf, type KnownHosts } from './known-hosts.ts';

/** What opening a connection needs besides the route. */
export interface ConnectContext {
  /** The machine's hostname: every error names it. */
  machine: string;
  knownHosts: KnownHosts;
  acceptNewHostKeys: boolean;
  agentSocket?: string;
  readyTimeoutMs: number;
  keepaliveIntervalMs: number;
  keepaliveCountMax: number;
  log: (line: string) => void;
  /**
   * What a person watching the run is told at once, without -v (`connecting to ...`, each retry):
   * lines about this machine, without its name. Without it, retries go to `log`.
   */
  progress?: (line: string) => void;
}

/** Backoff for connection failures: `attempts` tries in all, delays doubling from baseDelayMs. */
export interface RetryPolicy {
  attempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /** The whole wait for one machine, attempts and pauses together: no retry starts past it, the last attempt's handshake is cut to it (unset: no bound). */
  totalMs?: number;
  /** Waits between attempts; tests pass a recorder instead of a real timer. */
  sleep: (ms: number) => Promise<void>;
}

/** A live connection: the machine's client plus the jump-host clients it runs through. */
export interface Connection {
  client: Client;
  jumps: Client[];
}

/** A network-level failure worth another try (refused, unreachable, timed out, reset in handshake). */
class RetryableFailure extends Error {
  constructor(
    readonly hop: Endpoint,
    readonly reason: string,
  ) {
    super(`${hop.display}: ${reason}`);
  }
}

/** Opens the route with retries for network failures; auth and host-key errors are thrown at once. */
export async function connectWithRetry(route: Route, ctx: ConnectContext, retry: RetryPolicy): Promise<Connection> {
  const via = route.jumps.length ? ` via ${route.jumps.map((j) => j.display).join(', ')}` : '';
  const connecting = `connecting to ${route.target.display}${via}`;
  if (ctx.progress) ctx.progress(connecting);
  else ctx.log(`${ctx.machine}: ${connecting}`);
  const started = Date.now();
  const left = () => (retry.totalMs === undefined ? Infinity : retry.totalMs - (Date.now() - started));
  const say = (line: string) => (ctx.progress ? ctx.progress(line) : ctx.log(`${ctx.machine}: ${line}`));
  for (let attempt = 1; ; attempt++) {
    try {
      // The handshake of an attempt never runs past the whole wait.
      const readyTimeoutMs = Math.max(1, Math.min(ctx.readyTimeoutMs, left()));
      return await connectRoute(route, readyTimeoutMs === ctx.readyTimeoutMs ? ctx : { ...ctx, readyTimeoutMs });
    } catch (e) {
      if (!(e instanceof RetryableFailure)) throw e;
      const delay = Math.min(retry.baseDelayMs * 2 ** (attempt - 1), retry.maxDelayMs);
      // A retry that would start with under a second left is no retry: give up with what was seen.
      if (attempt >= retry.attempts || left() - delay < 1000) throw new ConnectError(ctx.machine, e.hop.display, e.reason, attempt);
      const retrying = `retry ${attempt + 1} of ${retry.attempts} in ${delay / 1000} s`;
      if (ctx.progress) ctx.progress(`no answer (${e.reason}${e.hop === route.target ? '' : ` at ${e.hop.display}`}), ${retrying}`);
      else ctx.log(`${ctx.machine}: no answer from ${e.message}, ${retrying}`);
      await retry.sleep(delay);
      // Each retry is shown as it starts, so a wait in a handshake is never silent.
      say(`${connecting}: attempt ${attempt + 1} of ${retry.attempts}`);
    }
  }
}

/** Connects hop by hop: each jump host forwards a stream to the next hop, the last hop is the machine. */
async function connectRoute(route: Route, ctx: ConnectContext): Promise<Connection> {
  const hops = [...route.jumps, route.target];
  const opened: Client[] = [];
  let sock: Readable | undefined;
  try {
    for (let i = 0; i < hops.length; i++) {
      const client = await connectHop(hops[i]!, ctx, sock);
      opened.push(client);
      const next = hops[i + 1];
      if (next) sock = await forward(client, hops[i]!, next);
    }
  } catch (e) {
    for (const c of opened.reverse()) c.end();
    throw e;
  }
  const client = opened.pop()!;
  // The jump connections live exactly as long as the machine's connection.
  client.once('close', () => opened.forEach((j) => j.end()));
  return { client, jumps: opened };
}

function forward(jump: Client, via: Endpoint, to: Endpoint): Promise<Readable> {
  return new Promise((resolve, reject) => {
    jump.forwardOut('127.0.0.1', 0, to.host, to.port, (err, stream) => {
      if (err) reject(new RetryableFailure(via, `could not open a connection to ${to.host}:${to.port}: ${err.message}`));
      else resolve(stream);
    });
  });
}

const RETRYABLE_CODES = new Set(['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'ETIMEDOUT', 'ECONNRESET', 'EPIPE', 'ECONNABORTED', 'EAI_AGAIN']);
const REASONS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ETIMEDOUT: 'connection timed out',
  ECONNRESET: 'connection reset during the SSH handshake',
};

/** One SSH handshake + authentication to one hop, over a TCP socket or a forwarded stream. */
function connectHop(hop: Endpoint, ctx: ConnectContext, sock: Readable | undefined): Promise<Client> {
  const offer = authOffer(hop, ctx.agentSocket);
  if (offer.methods.length === 0) return Promise.reject(new AuthError(ctx.machine, hop.display, [], offer.notes));
  const serverHostKey = hostKeyAlgorithms(ctx.knownHosts.keyTypesFor(hop.hostKeyNames));
  /** Why the host verifier said no: reported instead of ssh2's generic "Host denied". */
  let refusal: Error | undefined;
  const client = new Client();
  return new Promise((resolve, reject) => {
    let settled = false;
    const fail = (e: Error) => {
      if (settled) return;
      settled = true;
      client.end();
      reject(e);
    };
    client.on('error', (err: Error & { level?: string; code?: string | number }) => {
      if (refusal) return fail(refusal);
      if (err.level === 'client-authentication' || /authentication/i.test(err.message)) {
        return fail(new AuthError(ctx.machine, hop.display, offer.offered, offer.notes));
      }
      const code = typeof err.code === 'string' ? err.code : '';
      if (err.level === 'client-timeout') return fail(new RetryableFailure(hop, 'timed out waiting for the SSH handshake'));
      if (RETRYABLE_CODES.has(code)) return fail(new RetryableFailure(hop, REASONS[code] ?? err.message));
      // What sshd does under MaxStartups pressure, or a machine still booting: worth another try.
      if (/Connection lost before handshake/.test(err.message)) return fail(new RetryableFailure(hop, 'connection closed before the SSH handshake'));
      fail(new ConnectError(ctx.machine, hop.display, err.message, 1));
    });
    client.once('close', () => {
      if (refusal) return fail(refusal);
      fail(new RetryableFailure(hop, 'connection closed during the SSH handshake'));
    });
    client.once('ready', () => {
      settled = true;
      resolve(client);
    });
    // The first hop's TCP socket is ours (ssh2 would make the same one), so it can batch writes.
    const tcp = sock ? undefined : createConnection({ host: hop.host, port: hop.port });
    if (tcp) {
      // Without TCP_NODELAY a request that goes out as two small writes waits for the server's
      // delayed ACK: every exec took ~48 ms instead of ~5 ms on the lab.
      tcp.setNoDelay(true);
      batchWrites(tcp);
    }
    const connect = () => client.connect({
      host: hop.host,
      port: hop.port,
      username: hop.user,
      sock: sock ?? tcp,
      readyTimeout: ctx.readyTimeoutMs,
      keepaliveInterval: ctx.keepaliveIntervalMs,
      keepaliveCountMax: ctx.keepaliveCountMax,
      authHandler: offer.methods,
      // Prefer the key types already pinned, so a server with several keys shows the pinned one.
      algorithms: serverHostKey ? { serverHostKey } : undefined,
      hostVerifier: (key: Buffer) => {
        const verdict = ctx.knownHosts.verify(hop.hostKeyNames, key);
        if (verdict.status === 'match') return true;
        if (verdict.status === 'unknown' && ctx.acceptNewHostKeys) {
          try {
            ctx.knownHosts.pin(hop.hostKeyNames, key);
          } catch (e) {
            refusal = new TransportError(ctx.machine, `cannot pin the host key of ${hop.display} in ${ctx.knownHosts.file}: ${(e as Error).message}`);
            return false;
          }
          ctx.log(`${ctx.machine}: pinned new host key ${fingerprint(key)} (${keyTypeOf(key)}) of ${hop.display} in ${ctx.knownHosts.file}`);
          return true;
        }
        const pinned = verdict.status === 'changed' ? verdict.pinned.map(fingerprint) : [];
        refusal = new HostKeyError(ctx.machine, verdict.status, fingerprint(key), pinned, ctx.knownHosts.file, hop.display);
        return false;
      },
    });
    try {
      connect();
      ignoreHostKeysAnnouncement(client);
    } catch (e) {
      tcp?.destroy();
      // ssh2 validates its options synchronously (e.g. a user name it cannot send).
      fail(new ConnectError(ctx.machine, hop.display, (e as Error).message, 1));
    }
  });
}

/**
 * Makes ssh2 let OpenSSH's `hostkeys-00@openssh.com` announcement (every host key the server has,
 * sent after login) pass unanswered. ssh2 answers it on its own with a hostkeys-prove request: the
 * server then signs with each of its host keys (RSA among them) and ssh2 checks every signature,
 * on every connection, for keys hardway never reads (it pins the one key the handshake proved).
 * As OpenSSH's client does with UpdateHostKeys off. Only the unanswered announcement is dropped: any
 * other global request still gets ssh2's answer. ssh2 keeps its handlers in internals; when those
 * change this does nothing and the proof is made as before (a unit test catches that).
 */
export function ignoreHostKeysAnnouncement(client: Client): void {
  const handlers = (client as unknown as { _protocol?: { _handlers?: Record<string, unknown> } })._protocol?._handlers;
  const original = handlers?.GLOBAL_REQUEST;
  if (!handlers || typeof original !== 'function') return;
  handlers.GLOBAL_REQUEST = (p: unknown, name: unknown, wantReply: unknown, data: unknown) => {
    if (name === 'hostkeys-00@openssh.com' && !wantReply) return;
    return (original as (...a: unknown[]) => unknown)(p, name, wantReply, data);
  };
}

const HOST_KEY_ALGORITHMS: ServerHostKeyAlgorithm[] = ['ssh-ed25519', 'ecdsa-sha2-nistp256', 'ecdsa-sha2-nistp384', 'ecdsa-sha2-nistp521', 'rsa-sha2-512', 'rsa-sha2-256', 'ssh-rsa'];

/**
 * Host key algorithms with those of the pinned key types first. Not only those: a machine that no
 * longer has a key of the pinned type must show another key and be refused as changed, not fail
 * with a vague negotiation error.
 */
function hostKeyAlgorithms(keyTypes: string[]): ServerHostKeyAlgorithm[] | undefined {
  const first = HOST_KEY_ALGORITHMS.filter((a) => keyTypes.includes(a.startsWith('rsa-sha2-') ? 'ssh-rsa' : a));
  return first.length ? [...first, ...HOST_KEY_ALGORITHMS.filter((a) => !first.includes(a))] : undefined;
}
