// One HTTPS endpoint of the cluster (an API server, an etcd member) asked from the jumpbox with a
// client certificate: Node's https, no client library. The official Kubernetes client for Node
// pulls in dozens of packages for what is here a handful of GETs, PATCHes and DELETEs, so it does
// not earn its weight. One keep-alive agent per endpoint: a run's requests share two TLS sessions.
import { Agent, request } from 'node:https';
import { FailureError } from '../errors.ts';

/** The TLS material of a client: the CA that signed the server, and the client's certificate and key (never logged). */
export interface TlsClient {
  ca: Buffer;
  cert: Buffer;
  key: Buffer;
}

/** What an endpoint answered: the HTTP status and the body as text. */
export interface HttpAnswer {
  status: number;
  body: string;
  /** The URL asked, for messages about the answer. */
  url?: string;
}

/** The endpoint gave no answer: no connection (refused, unreachable, a certificate that fails verification), or none in time. Not an HTTP error. */
export class NoAnswer extends Error {
  constructor(readonly url: string, readonly why: string, readonly certificate = false) {
    super(`${url} did not answer: ${why}`);
  }
}

/** The endpoint answered, but not what an API server or etcd answers (an endless body, a 200 that is not JSON): the step fails with this, no other route is tried. */
export class WrongAnswer extends FailureError {
  constructor(message: string) {
    super(message, 'the jumpbox reached something at that address that does not answer as the cluster does: check that machines.txt gives the control plane\'s address, and what listens there (a proxy?)');
  }
}

/** How long and how much one request may take; tests pass smaller figures. */
export interface Limits {
  /** Milliseconds to connect (TCP and TLS): the jumpbox is next to the machines, or it gets no answer at all. */
  connectMs: number;
  /** Milliseconds without a byte once connected (a server-side apply or a list may take a while). */
  answerMs: number;
  /** Milliseconds for the whole request, however the bytes trickle in. */
  deadlineMs: number;
  /** Bytes of one answer, at most (a list of every pod of a large cluster is a few MB). */
  maxBytes: number;
}

/** Milliseconds to connect: the jumpbox is next to the machines, or it gets no answer at all. */
export const CONNECT_TIMEOUT_MS = 3000;
/** Milliseconds an answer may go silent once connected (a server-side apply or a list). */
export const ANSWER_TIMEOUT_MS = 15_000;
/** The limits of every request unless told otherwise. */
export const DEFAULT_LIMITS: Limits = { connectMs: CONNECT_TIMEOUT_MS, answerMs: ANSWER_TIMEOUT_MS, deadlineMs: 60_000, maxBytes: 64 * 1024 * 1024 };

/** Seconds or MiB as a message gives them. */
const seconds = (ms: number) => `${ms / 1000} s`;
const mebibytes = (n: number) => `${Math.round((n / 1024 / 1024) * 100) / 100} MiB`;

/** Whether a TLS error is about a certificate (the server's failed verification, or the server refused ours), not about reaching the endpoint. */
export function isCertificateError(e: unknown): boolean {
  const code = (e as NodeJS.ErrnoException | undefined)?.code;
  return typeof code === 'string' && /CERT|SELF_SIGNED|UNABLE_TO_(GET|VERIFY)|ALERT_UNKNOWN_CA|ALERT_BAD_CERTIFICATE/.test(code);
}

/** An HTTPS endpoint (host, port) with its keep-alive agent; `get`, `patch`, `put` and `delete` return the status and body. */
export class HttpsEndpoint {
  private readonly agent: Agent;
  private readonly limits: Limits;

  constructor(readonly host: string, readonly port: number, tls: TlsClient, limits: Partial<Limits> = {}) {
    this.limits = { ...DEFAULT_LIMITS, ...limits };
    this.agent = new Agent({ keepAlive: true, maxSockets: 2, ca: tls.ca, cert: tls.cert, key: tls.key });
  }

  /** `https://host:port`, as output names the endpoint. */
  get url(): string {
    return `https://${this.host}:${this.port}`;
  }

  /** GET path. */
  get(path: string): Promise<HttpAnswer> {
    return this.send('GET', path);
  }

  /** PATCH path with body of that content type. */
  patch(path: string, body: string, contentType: string): Promise<HttpAnswer> {
    return this.send('PATCH', path, body, contentType);
  }

  /** PUT path with a JSON body (an update of the whole object). */
  put(path: string, body: string): Promise<HttpAnswer> {
    return this.send('PUT', path, body, 'application/json');
  }

  /** DELETE path (with a JSON body, e.g. DeleteOptions, when given). */
  delete(path: string, body?: string): Promise<HttpAnswer> {
    return this.send('DELETE', path, body, body === undefined ? undefined : 'application/json');
  }

  /** Closes the kept-alive connections (the end of a run). */
  close(): void {
    this.agent.destroy();
  }

  private send(method: string, path: string, body?: string, contentType?: string): Promise<HttpAnswer> {
    const where = `${this.url}${path}`;
    const { connectMs, answerMs, deadlineMs, maxBytes } = this.limits;
    return new Promise((resolve, reject) => {
      const headers: Record<string, string> = { accept: 'application/json' };
      if (body !== undefined) Object.assign(headers, { 'content-type': contentType!, 'content-length': String(Buffer.byteLength(body)) });
      // The first reason the request was cut short (a timeout, the size cap): what is reported,
      // whatever error the destroyed socket raises after it.
      let cut: NoAnswer | WrongAnswer | undefined;
      let done = false;
      const finish = (e: unknown, answer?: HttpAnswer) => {
        if (done) return;
        done = true;
        clearTimeout(deadline);
        if (answer) resolve(answer);
        else reject(cut ?? (e instanceof NoAnswer || e instanceof WrongAnswer ? e : new NoAnswer(where, (e as Error)?.message ?? String(e), isCertificateError(e))));
      };
      const stop = (why: NoAnswer | WrongAnswer) => {
        cut ??= why;
        req.destroy(why);
      };
      const req = request({ host: this.host, port: this.port, method, path, agent: this.agent, headers }, (res) => {
        const declared = Number(res.headers['content-length']);
        if (declared > maxBytes) return stop(tooBig(where, maxBytes));
        const chunks: Buffer[] = [];
        let got = 0;
        res.on('data', (c: Buffer) => {
          got += c.length;
          if (got > maxBytes) return stop(tooBig(where, maxBytes));
          chunks.push(c);
        });
        res.on('end', () => finish(undefined, { status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), url: where }));
        res.on('error', (e) => finish(e));
        res.on('close', () => finish(new Error('the connection closed before the answer was whole')));
      });
      const deadline = setTimeout(() => stop(new NoAnswer(where, `no whole answer within ${seconds(deadlineMs)}`)), deadlineMs);
      // A new connection has connectMs to be made; once it is (or on a kept-alive one, at once),
      // the answer may go silent for answerMs. The listener is taken off when the request ends:
      // a kept-alive socket outlives its requests, and each would leave one behind
      // (MaxListenersExceededWarning after ten requests).
      let connected = false;
      const answering = () => {
        connected = true;
        req.setTimeout(answerMs);
      };
      req.on('socket', (s) => {
        if (req.reusedSocket) return answering();
        req.setTimeout(connectMs);
        s.once('secureConnect', answering);
        req.once('close', () => s.off('secureConnect', answering));
      });
      req.on('timeout', () => stop(new NoAnswer(where, connected ? `nothing received for ${seconds(answerMs)}` : `no connection within ${seconds(connectMs)}`)));
      req.on('error', (e) => finish(e));
      req.end(body);
    });
  }
}

/** The size cap was reached. */
function tooBig(where: string, maxBytes: number): WrongAnswer {
  return new WrongAnswer(`${where} answered more than ${mebibytes(maxBytes)}, the most hardway reads of one answer`);
}

/** An answer's body as JSON; a body that is not JSON (a proxy's HTML page) is a WrongAnswer naming the endpoint. */
export function jsonOf<T = unknown>(a: HttpAnswer): T {
  try {
    return JSON.parse(a.body) as T;
  } catch {
    const start = a.body.trim().replace(/\s+/g, ' ');
    const shown = start.length > 80 ? `${start.slice(0, 80)}...` : start;
    throw new WrongAnswer(`${a.url ?? 'the endpoint'} answered ${a.status} but not with JSON (${JSON.stringify(shown)}): is a proxy or another server at that address?`);
  }
}

/** What an HTTP error status says, for output: `403 Forbidden: <the API's message>`. */
export function statusMessage(a: HttpAnswer): string {
  let said = a.body.trim();
  try {
    const status = JSON.parse(a.body) as { message?: string };
    if (typeof status.message === 'string') said = status.message;
  } catch {
    // Not a Kubernetes Status: its text as it is.
  }
  const reason = STATUS_TEXT[a.status] ?? 'error';
  return `${a.status} ${reason}${said ? `: ${said.split('\n')[0]!.slice(0, 300)}` : ''}`;
}

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found', 409: 'Conflict', 422: 'Unprocessable Entity',
  429: 'Too Many Requests', 500: 'Internal Server Error', 503: 'Service Unavailable',
};
