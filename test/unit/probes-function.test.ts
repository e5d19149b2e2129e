// The function probes run as a machine runs them (dash, then the bash and coreutils they start)
// against a real UDP DNS responder and real TCP listeners on this host's loopback.
import { spawn } from 'node:child_process';
import { createSocket, type Socket } from 'node:dgram';
import { createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dnsLookup, dnsQuery, parseDnsReply, tcpReach } from '../../src/probes/function.ts';
import type { ProbeRequest } from '../../src/probes/probe.ts';

// An address of the loopback network no other service binds port 53 of (systemd-resolved takes 127.0.0.53).
const DNS_AT = '127.0.0.77';

/** What `req` answers when dash runs its command, parsed. */
function ask<R>(req: ProbeRequest<R>): Promise<R> {
  return new Promise((resolve, reject) => {
    const p = spawn('/bin/dash', ['-c', req.cmd.text], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    p.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    p.on('error', reject);
    p.on('close', (code) => resolve(req.parse({ code: code ?? 1, stdout })));
  });
}

/** A reply to `query` with one A record per address (the name as a compression pointer), or `rcode` and none. */
function reply(query: Buffer, addresses: string[], rcode = 0): Buffer {
  const header = Buffer.from(query.subarray(0, 12));
  header[2] = 0x81;
  header[3] = 0x80 | rcode;
  header.writeUInt16BE(addresses.length, 6);
  const records = addresses.map((a) => Buffer.from([0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 30, 0, 4, ...a.split('.').map(Number)]));
  return Buffer.concat([header, query.subarray(12), ...records]);
}

let dns: Socket;
let answers: (q: Buffer) => Buffer | undefined = () => undefined;
let open: Server;
let openPort = 0;

beforeAll(async () => {
  dns = createSocket('udp4');
  dns.on('message', (msg, from) => {
    const r = answers(msg);
    if (r) dns.send(r, from.port, from.address);
  });
  await new Promise<void>((resolve) => dns.bind(53, DNS_AT, resolve));
  open = createServer((s) => s.end());
  await new Promise<void>((resolve) => open.listen(0, '127.0.0.1', resolve));
  openPort = (open.address() as { port: number }).port;
});
afterAll(() => {
  dns.close();
  open.close();
});

describe('dnsLookup: a query for a name sent to one server over UDP, with bash and coreutils alone', () => {
  it('reads the A records the server answered', async () => {
    answers = (q) => reply(q, ['10.32.0.1']);
    expect(await ask(dnsLookup.ask(DNS_AT, 'kubernetes.default.svc.cluster.local'))).toEqual({ answered: true, rcode: 0, addresses: ['10.32.0.1'], from: 'host' });
  });

  it('reads NXDOMAIN as an answer without addresses', async () => {
    answers = (q) => reply(q, [], 3);
    expect(await ask(dnsLookup.ask(DNS_AT, 'kubernetes.default.svc.cluster.local'))).toEqual({ answered: true, rcode: 3, addresses: [], from: 'host' });
  });

  it('says no answer came when the server stays silent, within its bound', async () => {
    answers = () => undefined;
    const started = Date.now();
    expect(await ask(dnsLookup.ask(DNS_AT, 'kubernetes.default.svc.cluster.local'))).toEqual({ answered: false, why: 'no answer within 2 s', from: 'host' });
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('says the query was refused when nothing listens there (ICMP port unreachable), at once', async () => {
    expect(await ask(dnsLookup.ask('127.0.0.78', 'kubernetes.default.svc.cluster.local'))).toEqual({ answered: false, why: 'connection refused', from: 'host' });
  });

  it('sends the name the server is asked for (the wire format holds its labels)', async () => {
    let asked = '';
    answers = (q) => {
      asked = q.subarray(12, q.length - 4).toString('latin1');
      return reply(q, ['10.32.0.1']);
    };
    await ask(dnsLookup.ask(DNS_AT, 'kubernetes.default.svc.cluster.local'));
    expect(asked).toBe('\x0akubernetes\x07default\x03svc\x07cluster\x05local\x00');
  });

  it('refuses a reply to another query', () => {
    const other = reply(dnsQuery('x.local', 1), ['10.0.0.1']);
    expect(parseDnsReply(other.toString('hex'), 2)).toEqual({ answered: false, why: `a reply that is not an answer to the query (${other.length} bytes)` });
  });
});

describe('tcpReach: a TCP connect to each address:port, all at once, each bounded', () => {
  it('says which port answered and why the others did not', async () => {
    const closed = `127.0.0.1:${openPort === 1 ? 2 : 1}`;
    const { from, results: answered } = await ask(tcpReach.ask([`127.0.0.1:${openPort}`, closed]));
    // This host runs no pod: asked from its own network.
    expect(from).toBe('host');
    expect(answered).toContainEqual({ target: `127.0.0.1:${openPort}`, ok: true });
    expect(answered).toContainEqual({ target: closed, ok: false, why: 'Connection refused' });
    expect(answered).toHaveLength(2);
  });
});
