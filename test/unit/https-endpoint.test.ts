// Issue 34, items 4 and 6: the direct HTTPS client (src/cluster-api/https-endpoint.ts) against
// loopback HTTPS servers with pki/'s certificates: many requests over one keep-alive connection
// add no listener that stays (no MaxListenersExceededWarning), a reused connection gets the
// answer's timeout and not the connection's, a drip is cut at the overall deadline, an endless
// body at the size cap, a certificate that fails verification is warned once, and a 200 that is
// not JSON is a clear wrong answer.
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpsEndpoint, NoAnswer, WrongAnswer, jsonOf, type Limits } from '../../src/cluster-api/https-endpoint.ts';
import { ClusterApi } from '../../src/cluster-api/cluster-api.ts';
import { apiClientTls } from '../../src/cluster-api/credentials.ts';
import { gatherApi } from '../../src/doctor/api.ts';
import { apiListsAnswer, podsLabelledAnswer } from '../../src/cluster-api/answers.ts';
import type { Inventory } from '../../src/inventory.ts';
import { project } from './step-plans.helpers.ts';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

describe('the direct HTTPS client', () => {
  let inv: Inventory;
  let server: Server;
  let port: number;
  let handler: Handler = (_req, res) => res.end('{}');

  beforeAll(async () => {
    inv = await project();
    const file = (f: string) => readFileSync(join(inv.dir, f));
    server = createServer({ cert: file('pki/kube-api-server.crt'), key: file('pki/kube-api-server.key'), ca: file('pki/ca.crt'), requestCert: true, rejectUnauthorized: true },
      (req, res) => handler(req, res));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  const endpoint = (limits: Partial<Limits> = {}) => new HttpsEndpoint('127.0.0.1', port, apiClientTls(inv), limits);

  it('many requests over one keep-alive connection: no warning at all (no secureConnect listener left per request), one TLS session', async () => {
    const warnings: Error[] = [];
    const onWarning = (w: Error) => warnings.push(w);
    process.on('warning', onWarning);
    const sockets = new Set<unknown>();
    handler = (req, res) => {
      sockets.add(req.socket);
      res.setHeader('content-type', 'application/json');
      res.end('{"ok":true}');
    };
    const e = endpoint();
    try {
      // One after the other, so the agent hands every request the same kept-alive socket.
      for (let i = 0; i < 40; i++) expect((await e.get(`/n/${i}`)).status).toBe(200);
      // Also side by side, over the agent's two sockets.
      await Promise.all(Array.from({ length: 30 }, (_, i) => e.get(`/p/${i}`)));
      // Warnings are emitted on the next turn.
      await new Promise((r) => setImmediate(r));
    } finally {
      e.close();
      process.off('warning', onWarning);
    }
    expect(warnings.map((w) => `${w.name}: ${w.message}`)).toEqual([]);
    expect(sockets.size).toBeLessThanOrEqual(2);
  });

  it('a reused connection gets the answer\'s timeout, not the connection\'s: a slow answer on it is waited for', async () => {
    handler = (req, res) => {
      const delay = req.url === '/slow' ? 400 : 0;
      setTimeout(() => res.end('{}'), delay);
    };
    const e = endpoint({ connectMs: 150, answerMs: 2000 });
    try {
      expect((await e.get('/fast')).status).toBe(200);
      // The same socket again: 400 ms is past the connect timeout but well within the answer's.
      expect((await e.get('/slow')).status).toBe(200);
    } finally {
      e.close();
    }
  });

  it('an answer that does not come: the message gives the answer timeout in seconds', async () => {
    handler = () => {};
    const e = endpoint({ connectMs: 1000, answerMs: 300 });
    try {
      const err = await e.get('/never').catch((x: unknown) => x);
      expect(err).toBeInstanceOf(NoAnswer);
      expect((err as Error).message).toBe(`https://127.0.0.1:${port}/never did not answer: nothing received for 0.3 s`);
    } finally {
      e.close();
    }
  });

  it('a server that drips a byte at a time is cut at the overall deadline', async () => {
    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const t = setInterval(() => res.write(' '), 50);
      res.on('close', () => clearInterval(t));
    };
    const e = endpoint({ connectMs: 1000, answerMs: 300, deadlineMs: 700 });
    const started = Date.now();
    try {
      const err = await e.get('/drip').catch((x: unknown) => x);
      expect(err).toBeInstanceOf(NoAnswer);
      expect((err as Error).message).toBe(`https://127.0.0.1:${port}/drip did not answer: no whole answer within 0.7 s`);
      expect(Date.now() - started).toBeLessThan(3000);
    } finally {
      e.close();
    }
  });

  it('an endless body is cut at the size cap, a wrong answer (not a fall back)', async () => {
    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const chunk = Buffer.alloc(64 * 1024, 0x20);
      const more = () => {
        while (res.write(chunk));
      };
      res.on('drain', more);
      more();
    };
    const e = endpoint({ maxBytes: 1024 * 1024 });
    const before = process.memoryUsage().rss;
    try {
      const err = await e.get('/endless').catch((x: unknown) => x);
      expect(err).toBeInstanceOf(WrongAnswer);
      expect((err as Error).message).toBe(`https://127.0.0.1:${port}/endless answered more than 1 MiB, the most hardway reads of one answer`);
      expect(process.memoryUsage().rss - before).toBeLessThan(200 * 1024 * 1024);
    } finally {
      e.close();
    }
  });

  it('a 200 that is not JSON (a proxy\'s page) is a wrong answer naming the endpoint, not a SyntaxError', async () => {
    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<html><body>Please log in to the proxy</body></html>');
    };
    const e = endpoint();
    try {
      const a = await e.get('/api/v1/namespaces/kube-system/pods');
      expect(() => jsonOf(a)).toThrow(WrongAnswer);
      expect(() => jsonOf(a)).toThrow(`https://127.0.0.1:${port}/api/v1/namespaces/kube-system/pods answered 200 but not with JSON ("<html><body>Please log in to the proxy</body></html>"): is a proxy or another server at that address?`);
      await expect(podsLabelledAnswer(e, 'kube-system', 'k8s-app=kube-dns')).rejects.toThrow(/answered 200 but not with JSON/);
      await expect(apiListsAnswer(e)).rejects.toThrow(/answered 200 but not with JSON/);
    } finally {
      e.close();
    }
  });

  it('a server certificate that fails verification is warned once, naming the endpoint and why; the route over SSH is taken', async () => {
    handler = (_req, res) => res.end('ok');
    const warned: string[] = [];
    const said: string[] = [];
    const tls = { ...apiClientTls(inv), ca: readFileSync(join(inv.dir, 'pki/etcd-ca.crt')) };
    const api = new ClusterApi(inv, { apiAddress: { host: '127.0.0.1', port }, apiTls: tls, timeouts: { connectMs: 1000, answerMs: 1000 }, say: (l) => said.push(l), warn: (l) => warned.push(l) });
    try {
      const e = api.apiServer()!;
      const err = await e.get('/readyz').catch((x: unknown) => x);
      expect(err).toBeInstanceOf(NoAnswer);
      expect((err as NoAnswer).certificate).toBe(true);
      expect(await api.confirmUnreachable(e, '/readyz')).toBe(true);
      expect(await api.confirmUnreachable(e, '/readyz')).toBe(true);
      expect(warned).toHaveLength(1);
      expect(warned[0]).toMatch(new RegExp(`^https://127\\.0\\.0\\.1:${port}: its certificate failed verification \\(.+\\): asking through kubectl/etcdctl on the control-plane machine over SSH; check that pki/ holds the CA`));
      expect(said).toEqual([]);
    } finally {
      api.close();
    }
  });

  it('doctor: an API server address that answers 200 but not JSON is evidence (its words), not a crash, and kubectl is not asked', async () => {
    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<html>proxy</html>');
    };
    const said: string[] = [];
    const api = new ClusterApi(inv, { apiAddress: { host: '127.0.0.1', port } });
    const evidence = await gatherApi(inv, { PATH: '' }, api, (l) => said.push(l));
    expect(evidence.command).toMatch(/^GET https:\/\/127\.0\.0\.1:\d+ \/api\/v1\/nodes /);
    expect(evidence.error).toMatch(/answered 200 but not with JSON/);
    expect(said).toEqual([]);
  });

  it('doctor: a certificate that fails verification is warned too, then kubectl is asked', async () => {
    const warned: string[] = [];
    const tls = { ...apiClientTls(inv), ca: readFileSync(join(inv.dir, 'pki/etcd-ca.crt')) };
    const api = new ClusterApi(inv, { apiAddress: { host: '127.0.0.1', port }, apiTls: tls, warn: (l) => warned.push(l) });
    const evidence = await gatherApi(inv, { PATH: '' }, api);
    expect(evidence.command).toMatch(/^kubectl /);
    expect(warned).toEqual([expect.stringMatching(new RegExp(`^https://127\\.0\\.0\\.1:${port}: its certificate failed verification`))]);
  });
});
