// One HTTPS endpoint of the cluster (an API server, an etcd member) asked from the jumpbox with a
// client certificate: Node's https, no client library. The official Kubernetes client for Node
// pulls in dozens of packages for what is here a handful of GETs, PATCHes and DELETEs, so it does
// not earn its weight. One keep-alive agent per endpoint: a run's requests share two TLS sessions.
import { Agent, request } from 'node:https';

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
}

/** The endpoint gave no answer: no connection (refused, unreachable), or none in time. Not an HTTP error. */
export class NoAnswer extends Error {
  constructor(readonly url: string, why: string) {
    super(`${url} did not answer: ${why}`);
  }
}

/** Milliseconds to connect and to wait for an answer: the jumpbox is next to the machines, or it gets no answer at all. */
export const CONNECT_TIMEOUT_MS = 3000;
/** Milliseconds an answer may take once connected (a server-side apply or a list). */
export const ANSWER_TIMEOUT_MS = 15_000;

/** An HTTPS endpoint (host, port) with its keep-alive agent; `get`, `patch`, `put` and `delete` return the status and body. */
export class HttpsEndpoint {
  private readonly agent: Agent;

  constructor(readonly host: string, readonly port: number, tls: TlsClient, private readonly timeouts = { connectMs: CONNECT_TIMEOUT_MS, answerMs: ANSWER_TIMEOUT_MS }) {
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
    return new Promise((resolve, reject) => {
      const headers: Record<string, string> = { accept: 'application/json' };
      if (body !== undefined) Object.assign(headers, { 'content-type': contentType!, 'content-length': String(Buffer.byteLength(body)) });
      const req = request({ host: this.host, port: this.port, method, path, agent: this.agent, headers, timeout: this.timeouts.connectMs }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', (e) => reject(new NoAnswer(where, e.message)));
      });
      // Connected: the answer may take longer than the connection did (a list, an apply).
      req.on('socket', (s) => s.once('secureConnect', () => req.setTimeout(this.timeouts.answerMs)));
      req.on('timeout', () => req.destroy(new Error(`no answer within ${req.socket && !req.socket.connecting ? this.timeouts.answerMs : this.timeouts.connectMs} ms`)));
      req.on('error', (e) => reject(e instanceof NoAnswer ? e : new NoAnswer(where, e.message)));
      req.end(body);
    });
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
