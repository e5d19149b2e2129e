// Connecting: which failures are retried (network) and which never are (authentication), the
// backoff between attempts, and the credentials offered (identity files, a real ssh-agent).
import { execFileSync, spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo, type Server as NetServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { SshSettings } from '../../src/cluster-settings.ts';
import { InputError } from '../../src/errors.ts';
import { sh } from '../../src/shell.ts';
import { connectionPool } from '../../src/engine/connections.ts';
import { AuthError, ConnectError, createTransport, KnownHosts, openTransport, type TransportOptions } from '../../src/transport/index.ts';
import { ignoreHostKeysAnnouncement } from '../../src/transport/connect.ts';
import { KEYS, knownHostsLine, startTestServer, testMachine, type TestServer } from '../fixtures/ssh/test-server.ts';

let dir: string;
let server: TestServer | undefined;
let sleeps: number[];
const cleanups: (() => void | Promise<void>)[] = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'hardway-connect-'));
  sleeps = [];
});
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
  await server?.close();
  server = undefined;
  rmSync(dir, { recursive: true, force: true });
});

const options = (extra: Partial<TransportOptions> = {}): TransportOptions => ({
  dir, home: dir, env: {}, retry: { sleep: async (ms) => void sleeps.push(ms) }, ...extra,
});
const settings = (port: number, extra: Partial<SshSettings> = {}): SshSettings => ({
  user: 'root', port, knownHosts: 'known_hosts', identityFile: join(KEYS, 'client_ed25519'), ...extra,
});

/** A port on 127.0.0.1 that nothing listens on. */
async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const port = (s.address() as AddressInfo).port;
  await new Promise((r) => s.close(r));
  return port;
}

describe('retries', () => {
  it('retries a refused connection with doubling backoff, then names machine, address and attempts', async () => {
    const port = await closedPort();
    const log: string[] = [];
    const err = await openTransport(testMachine(), settings(port), options({ log: (l) => log.push(l) })).catch((e) => e);
    expect(err).toBeInstanceOf(ConnectError);
    expect(err.message).toBe(`node-0: cannot connect to root@127.0.0.1:${port}: connection refused (gave up after 4 attempts)`);
    expect(err.exitCode).toBe(1);
    expect(sleeps).toEqual([500, 1000, 2000]);
    expect(log).toHaveLength(7);
    expect(log[0]).toBe(`node-0: connecting to root@127.0.0.1:${port}`);
    expect(log[1]).toBe(`node-0: no answer from root@127.0.0.1:${port}: connection refused, retry 2 of 4 in 0.5 s`);
    expect(log[2]).toBe(`node-0: connecting to root@127.0.0.1:${port}: attempt 2 of 4`);
  });

  it('tells the progress callback first that it connects, then each retry, naming the reason and the wait', async () => {
    const port = await closedPort();
    const progress: string[] = [];
    const log: string[] = [];
    await openTransport(testMachine(), settings(port), options({ log: (l) => log.push(l), progress: (l) => progress.push(l) })).catch(() => undefined);
    expect(progress).toEqual([
      `connecting to root@127.0.0.1:${port}`,
      'no answer (connection refused), retry 2 of 4 in 0.5 s',
      `connecting to root@127.0.0.1:${port}: attempt 2 of 4`,
      'no answer (connection refused), retry 3 of 4 in 1 s',
      `connecting to root@127.0.0.1:${port}: attempt 3 of 4`,
      'no answer (connection refused), retry 4 of 4 in 2 s',
      `connecting to root@127.0.0.1:${port}: attempt 4 of 4`,
    ]);
    expect(log).toEqual([]);
  });

  it('a server that accepts TCP and never speaks: ssh.connectTimeout bounds each handshake, each retry shown as it starts, the whole wait bounded', async () => {
    const socks = new Set<import('node:net').Socket>();
    const silent: NetServer = createServer((sock) => void socks.add(sock));
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', () => r()));
    cleanups.push(() => new Promise<void>((r) => {
      socks.forEach((s) => s.destroy());
      silent.close(() => r());
    }));
    const port = (silent.address() as AddressInfo).port;
    const progress: string[] = [];
    const started = Date.now();
    // 1 s handshakes within 2.8 s in all: two whole attempts and a pause, then no retry that could not finish.
    const err = await openTransport(testMachine(), settings(port, { connectTimeout: 1 }), options({
      progress: (l) => progress.push(`${((Date.now() - started) / 1000).toFixed(1)} ${l}`),
      retry: { sleep: (ms) => new Promise((r) => setTimeout(r, ms)), totalMs: 2_800 },
    })).catch((e) => e);
    const took = Date.now() - started;
    expect(err).toBeInstanceOf(ConnectError);
    expect(err.message).toBe(`node-0: cannot connect to root@127.0.0.1:${port}: timed out waiting for the SSH handshake (gave up after 2 attempts)`);
    expect(took).toBeGreaterThanOrEqual(2_000);
    expect(took).toBeLessThan(2_900);
    expect(progress.map((l) => l.replace(/^[\d.]+ /, ''))).toEqual([
      `connecting to root@127.0.0.1:${port}`,
      'no answer (timed out waiting for the SSH handshake), retry 2 of 4 in 0.5 s',
      `connecting to root@127.0.0.1:${port}: attempt 2 of 4`,
    ]);
    // The second attempt is shown when it starts (after the first 1 s handshake and the 0.5 s pause), not when it ends.
    expect(Number(progress[2]!.split(' ')[0])).toBeLessThan(1.9);
  });

  it('by default a handshake waits 10 s and the whole wait for one machine stays under 35 s', () => {
    const t = createTransport(testMachine(), settings(22), { dir, home: dir, env: {} }, new KnownHosts(join(dir, 'known_hosts')));
    type Config = { connect: { readyTimeoutMs: number }; retry: { totalMs: number } };
    const configOf = (x: unknown) => (x as { config: Config }).config;
    expect(configOf(t).connect.readyTimeoutMs).toBe(10_000);
    expect(configOf(t).retry.totalMs).toBeLessThan(35_000);
    const three = createTransport(testMachine(), settings(22, { connectTimeout: 3 }), { dir, home: dir, env: {} }, new KnownHosts(join(dir, 'kh')));
    expect(configOf(three).connect.readyTimeoutMs).toBe(3_000);
  });

  it('retries a connection reset during the handshake, counting each attempt at the server', async () => {
    let accepted = 0;
    const rude: NetServer = createServer((sock) => {
      accepted++;
      sock.destroy();
    });
    await new Promise<void>((r) => rude.listen(0, '127.0.0.1', () => r()));
    cleanups.push(() => new Promise<void>((r) => rude.close(() => r())));
    const port = (rude.address() as AddressInfo).port;
    const err = await openTransport(testMachine(), settings(port), options({ retry: { attempts: 3, baseDelayMs: 10, sleep: async (ms) => void sleeps.push(ms) } })).catch((e) => e);
    expect(err).toBeInstanceOf(ConnectError);
    expect(err.attempts).toBe(3);
    expect(accepted).toBe(3);
    expect(sleeps).toEqual([10, 20]);
  });

  it('caps the backoff at maxDelayMs', async () => {
    const port = await closedPort();
    await openTransport(testMachine(), settings(port), options({ retry: { attempts: 5, baseDelayMs: 1000, maxDelayMs: 3000, sleep: async (ms) => void sleeps.push(ms) } })).catch(() => undefined);
    expect(sleeps).toEqual([1000, 2000, 3000, 3000]);
  });

  it('never retries an authentication failure', async () => {
    server = await startTestServer({ sandbox: dir });
    writeFileSync(join(dir, 'known_hosts'), knownHostsLine(server.port));
    const err = await openTransport(testMachine(), settings(server.port, { identityFile: join(KEYS, 'stranger_ed25519') }), options()).catch((e) => e);
    expect(err).toBeInstanceOf(AuthError);
    expect(err.message).toMatch(/^node-0: authentication failed for root@127\.0\.0\.1:\d+ \(tried: .*stranger_ed25519\)/);
    expect(server.stats.connections).toBe(1);
    expect(sleeps).toEqual([]);
  });
});

describe('credentials', () => {
  it('offers -i keys before cluster.yaml identityFile, and explains a passphrase-protected key', async () => {
    server = await startTestServer({ sandbox: dir });
    writeFileSync(join(dir, 'known_hosts'), knownHostsLine(server.port));
    const t = await openTransport(testMachine(), settings(server.port, { identityFile: join(KEYS, 'stranger_ed25519') }),
      options({ identityFiles: [join(KEYS, 'client_ed25519')] }));
    expect((await t.exec(sh`echo ok`)).stdout).toBe('ok\n');
    await t.close();
    expect(server.stats.authAttempts).toBeLessThanOrEqual(2);
    const err = await openTransport(testMachine(), settings(server.port, { identityFile: join(KEYS, 'client_encrypted_ed25519') }), options()).catch((e) => e);
    expect(err).toBeInstanceOf(AuthError);
    expect(err.message).toContain('client_encrypted_ed25519 is passphrase-protected: add it to ssh-agent');
  });

  it('resolves cluster.yaml identityFile against the project directory; a missing one is an input error', async () => {
    server = await startTestServer({ sandbox: dir });
    writeFileSync(join(dir, 'known_hosts'), knownHostsLine(server.port));
    mkdirSync(join(dir, 'keys'));
    copyFileSync(join(KEYS, 'client_ed25519'), join(dir, 'keys/id'));
    const t = await openTransport(testMachine(), settings(server.port, { identityFile: 'keys/id' }), options());
    await t.close();
    const err = await openTransport(testMachine(), settings(server.port, { identityFile: 'keys/missing' }), options()).catch((e) => e);
    expect(err).toBeInstanceOf(InputError);
    expect(err.message).toContain(join(dir, 'keys/missing'));
  });

  it('authenticates through a real ssh-agent (SSH_AUTH_SOCK) holding the key', async () => {
    server = await startTestServer({ sandbox: dir });
    writeFileSync(join(dir, 'known_hosts'), knownHostsLine(server.port));
    const sock = join(dir, 'agent.sock');
    const agent = spawn('ssh-agent', ['-D', '-a', sock], { stdio: 'ignore' });
    cleanups.push(() => void agent.kill());
    for (let i = 0; i < 50 && !execOk('test', ['-S', sock]); i++) await new Promise((r) => setTimeout(r, 100));
    const key = join(dir, 'agent_key');
    copyFileSync(join(KEYS, 'client_ed25519'), key);
    execFileSync('chmod', ['600', key]);
    execFileSync('ssh-add', [key], { env: { SSH_AUTH_SOCK: sock }, stdio: 'ignore' });
    const t = await openTransport(testMachine(), { user: 'root', port: server.port, knownHosts: 'known_hosts' }, options({ env: { SSH_AUTH_SOCK: sock } }));
    expect((await t.exec(sh`echo via-agent`)).stdout).toBe('via-agent\n');
    await t.close();
  });
});

describe('the run\'s one pool (engine/connections.ts) over SSH', () => {
  it('opens a machine once on first use, shares it, forgets a failed one so a later step retries, and closes all', async () => {
    server = await startTestServer({ sandbox: dir });
    writeFileSync(join(dir, 'known_hosts'), knownHostsLine(server.port));
    const port = await closedPort();
    let opened = 0;
    const pool = connectionPool(async (host) => {
      opened++;
      if (!host.machine) throw new Error('no jumpbox in this test');
      return openTransport(host.machine, settings(host.name === 'node-2' ? port : server!.port), options({ retry: { attempts: 1 } }));
    });
    const node0 = { name: 'node-0', machine: testMachine('node-0') };
    expect((await (await pool.open(node0)).exec(sh`echo one`)).stdout).toBe('one\n');
    expect(await pool.open(node0)).toBe(await pool.open(node0));
    expect(server.stats.connections).toBe(1);
    const node2 = { name: 'node-2', machine: testMachine('node-2') };
    await expect(pool.open(node2)).rejects.toBeInstanceOf(ConnectError);
    await expect(pool.open(node2)).rejects.toBeInstanceOf(ConnectError);
    expect(opened).toBe(3);
    const t = await pool.open(node0);
    await pool.closeAll();
    await expect(t.exec(sh`true`)).rejects.toThrow(/node-0: transport used after close/);
  });
});

function execOk(cmd: string, args: string[]): boolean {
  try {
    execFileSync(cmd, args, { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

describe("OpenSSH's hostkeys-00 announcement", () => {
  it('is left unanswered (no hostkeys-prove: the server signs nothing more), while other global requests still get their answer', async () => {
    server = await startTestServer({ sandbox: dir });
    const { default: ssh2 } = await import('ssh2');
    const client = new ssh2.Client();
    cleanups.push(() => void client.end());
    const ready = new Promise<void>((resolve, reject) => client.once('ready', () => resolve()).once('error', reject));
    client.connect({ host: '127.0.0.1', port: server.port, username: 'root', privateKey: readFileSync(join(KEYS, 'client_ed25519')), hostVerifier: () => true });
    ignoreHostKeysAnnouncement(client);
    await ready;
    const proto = (client as unknown as { _protocol: { _handlers: Record<string, (...a: unknown[]) => void>; openssh_hostKeysProve: (k: unknown) => void; requestFailure: () => void } })._protocol;
    const sent: string[] = [];
    proto.openssh_hostKeysProve = () => void sent.push('hostkeys-prove');
    proto.requestFailure = () => void sent.push('request-failure');
    // What sshd sends after login: its host keys (ssh2 hands them over parsed), no reply wanted.
    const hostKey = ssh2.utils.parseKey(readFileSync(join(KEYS, 'host_ed25519.pub')));
    proto._handlers.GLOBAL_REQUEST!(proto, 'hostkeys-00@openssh.com', false, [hostKey]);
    proto._handlers.GLOBAL_REQUEST!(proto, 'something-else@example.com', true, Buffer.alloc(0));
    expect(sent).toEqual(['request-failure']);
  });
});
