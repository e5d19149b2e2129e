// exec over SSH against an in-process ssh2.Server: results, stdin, timeouts, the channel cap,
// connection reuse and reconnecting after a drop.
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sh, type Command } from '../../src/shell.ts';
import { CommandTimeoutError, openTransport, type SshTransport, type TransportOptions } from '../../src/transport/index.ts';
import { KEYS, knownHostsLine, startTestServer, testMachine, type TestServer } from '../fixtures/ssh/test-server.ts';

let dir: string;
let server: TestServer;
let transport: SshTransport | undefined;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'hardway-exec-'));
  server = await startTestServer({ sandbox: dir });
  writeFileSync(join(dir, 'known_hosts'), knownHostsLine(server.port));
});
afterEach(async () => {
  await transport?.close();
  transport = undefined;
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

function options(extra: Partial<TransportOptions> = {}): TransportOptions {
  return { dir, home: dir, env: {}, retry: { sleep: async () => undefined }, ...extra };
}
async function open(extra: Partial<TransportOptions> = {}): Promise<SshTransport> {
  const ssh = { user: 'root', port: server.port, knownHosts: 'known_hosts', identityFile: join(KEYS, 'client_ed25519') };
  transport = await openTransport(testMachine(), ssh, options(extra));
  return transport;
}

describe('exec', () => {
  it('returns exit code, stdout and stderr; a non-zero code is data, not an error', async () => {
    const t = await open();
    expect(await t.exec(sh`echo out; echo err >&2; exit 3`)).toEqual({ code: 3, stdout: 'out\n', stderr: 'err\n' });
    expect(await t.exec(sh`printf %s ${"it's quoted; $HOME"}`)).toEqual({ code: 0, stdout: "it's quoted; $HOME", stderr: '' });
  });

  it('feeds stdin and closes it', async () => {
    const t = await open();
    const r = await t.exec(sh`wc -c`, { stdin: Buffer.alloc(100_000, 'x') });
    expect(r.stdout.trim()).toBe('100000');
    expect((await t.exec(sh`cat`, { stdin: 'secret-ish\n' })).stdout).toBe('secret-ish\n');
  });

  it('accepts only Commands built with sh', async () => {
    const t = await open();
    await expect(t.exec('echo hi' as unknown as Command)).rejects.toThrow(/Command built with sh/);
    expect(server.stats.commands).toEqual([]);
  });

  it('kills a command that outlives its timeout and everything it started, with an error naming machine and command', async () => {
    const t = await open();
    const marker = join(dir, 'child-survived');
    const cmd = sh`echo started >&2; (sleep 1; touch ${marker}) & sleep 30`;
    const err = await t.exec(cmd, { timeoutMs: 500 }).catch((e) => e);
    expect(err).toBeInstanceOf(CommandTimeoutError);
    expect(err.message).toMatch(/^node-0: command timed out after 500ms and was killed: echo started >&2; \(sleep 1; touch /);
    expect(err.message).toContain('started');
    expect(err.exitCode).toBe(1);
    // The slot and the connection are still usable.
    expect((await t.exec(sh`echo again`)).stdout).toBe('again\n');
    expect(server.stats.signals).toEqual(['KILL']);
    expect(server.stats.connections).toBe(1);
    // The background child was killed too (by its environment tag; the signal only reaches the shell).
    await new Promise((r) => setTimeout(r, 1500));
    expect(existsSync(marker)).toBe(false);
  });

  it('reuses one connection for every command', async () => {
    const t = await open();
    for (let i = 0; i < 5; i++) await t.exec(sh`true`);
    await Promise.all([1, 2, 3].map(() => t.exec(sh`true`)));
    expect(server.stats.connections).toBe(1);
  });

  it('keeps at most 8 channels open at once, below MaxSessions 10', async () => {
    const t = await open();
    const results = await Promise.all(Array.from({ length: 24 }, (_, i) => t.exec(sh`sleep 0.2; echo ${i}`)));
    expect(results.map((r) => r.stdout.trim())).toEqual(Array.from({ length: 24 }, (_, i) => String(i)));
    expect(server.stats.maxSessionsOpen).toBe(8);
    expect(server.stats.refusedSessions).toBe(0);
  });

  it('honours a smaller channel cap', async () => {
    const t = await open({ maxChannels: 2 });
    await Promise.all(Array.from({ length: 6 }, () => t.exec(sh`sleep 0.1`)));
    expect(server.stats.maxSessionsOpen).toBe(2);
  });

  it('retries a channel that sshd refused (MaxSessions): the command then runs exactly once', async () => {
    const t = await open({ maxChannels: 12 });
    const results = await Promise.all(Array.from({ length: 12 }, (_, i) => t.exec(sh`sleep 0.3; echo ${`run-${i}`}`)));
    expect(results.map((r) => r.stdout)).toEqual(Array.from({ length: 12 }, (_, i) => `run-${i}\n`));
    expect(server.stats.refusedSessions).toBeGreaterThanOrEqual(2);
    expect(server.stats.maxSessionsOpen).toBe(10);
    for (let i = 0; i < 12; i++) expect(server.stats.commands.filter((c) => c.includes(`run-${i}'`))).toHaveLength(1);
  });

  it('reconnects on next use when the connection dropped between commands', async () => {
    const lines: string[] = [];
    const t = await open({ log: (l) => lines.push(l) });
    expect((await t.exec(sh`echo one`)).stdout).toBe('one\n');
    server.dropConnections();
    await new Promise((r) => setTimeout(r, 100));
    expect((await t.exec(sh`echo two`)).stdout).toBe('two\n');
    expect(server.stats.connections).toBe(2);
    expect(lines).toContain('node-0: reconnected');
  });

  it('reports a connection lost during a command, without rerunning it', async () => {
    const t = await open();
    const pending = t.exec(sh`sleep 5`).catch((e) => e);
    await new Promise((r) => setTimeout(r, 200));
    server.dropConnections();
    const err = await pending;
    expect(err.name).toBe('ConnectionLostError');
    expect(err.message).toMatch(/^node-0: connection lost during command: sleep 5/);
    expect(server.stats.commands.filter((c) => c.endsWith(" -c 'sleep 5'"))).toHaveLength(1);
  });
});
