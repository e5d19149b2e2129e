// Ctrl-C during `up` (issue 36 point 7): hardway says it was interrupted, which step was running on
// which machines, and where the run's log is, then exits 130. The machines are an SSH server on
// 127.0.0.1 (ssh2.Server in this process) that lets the key in and never answers a command, so the
// run is caught while it plans its first step (preflight); the process is sent SIGINT as a terminal's Ctrl-C would.
import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import ssh2 from 'ssh2';
import { afterAll, describe, expect, it } from 'vitest';
import { KEYS, key } from '../fixtures/ssh/test-server.ts';
import { InFlight } from '../../src/engine/in-flight.ts';

const BIN = resolve(import.meta.dirname, '../../bin/hardway.mjs');
const { Server } = ssh2;

/** An SSH server on 127.0.0.1 that accepts any public key and runs no command (each exec hangs). */
async function silentServer(): Promise<{ port: number; execs: () => number; close: () => void }> {
  let execs = 0;
  const server = new Server({ hostKeys: [key('host_ed25519')] }, (client) => {
    client.on('authentication', (ctx) => (ctx.method === 'publickey' ? ctx.accept() : ctx.reject(['publickey'])));
    client.on('session', (accept) => {
      accept().on('exec', (acceptExec) => {
        execs++;
        acceptExec(); // and never a byte or an exit status
      });
    });
    client.on('error', () => undefined);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { port: (server.address() as { port: number }).port, execs: () => execs, close: () => server.close() };
}

const servers: Array<() => void> = [];
afterAll(() => servers.forEach((close) => close()));

/** A project whose two machines are `ssh` on 127.0.0.1, and `up` started in it (-i its key, host keys pinned as they come). */
function startUp(port: number, keyAlgorithm: string) {
  const dir = mkdtempSync(join(tmpdir(), 'hw-interrupt-'));
  mkdirSync(join(dir, 'home'));
  copyFileSync(join(KEYS, 'client_ed25519'), join(dir, 'id'));
  writeFileSync(join(dir, 'machines.txt'), '10.240.0.10 server.kubernetes.local server\n10.240.0.20 node-0.kubernetes.local node-0 10.200.0.0/24\n');
  writeFileSync(join(dir, 'cluster.yaml'), `keyAlgorithm: ${keyAlgorithm}\nssh:\n  configFile: ssh_config\n`);
  writeFileSync(join(dir, 'ssh_config'), ['server', 'node-0'].map((h) => `Host ${h}\n  HostName 127.0.0.1\n  Port ${port}\n`).join(''));
  const env = { ...process.env, HOME: join(dir, 'home'), SSH_AUTH_SOCK: '', HARDWAY_NO_BUNDLE: '1', CI: 'true' };
  const child = spawn(process.execPath, [BIN, 'up', '-i', 'id', '--accept-new-host-keys'], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const seen = { out: '', err: '' };
  child.stdout.on('data', (d) => (seen.out += d));
  child.stderr.on('data', (d) => (seen.err += d));
  const exited = new Promise<number | null>((r) => child.on('close', (code) => r(code)));
  return { dir, child, seen, exited };
}

/** Waits (up to 60 s) until `ok`. */
async function until(ok: () => boolean): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!ok() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
}

describe('Ctrl-C during up', () => {
  it('while it makes pki/ (RSA keys take seconds): says so, and that no machine was changed yet; exits 130', async () => {
    const ssh = await silentServer();
    servers.push(ssh.close);
    const up = startUp(ssh.port, 'rsa-4096');
    await until(() => up.seen.out.includes('pki: checking the CAs'));
    expect(up.seen.out).toContain('preflight: 2 machine(s) reachable');
    up.child.kill('SIGINT');
    expect(await up.exited, up.seen.out + up.seen.err).toBe(130);
    expect(up.seen.err).toMatch(/^interrupted \(SIGINT\):\n {2}up: making pki\/ \(keys, certificates, kubeconfigs, encryption config\); no machine was changed yet\n/m);
    expect(ssh.execs()).toBe(0);
  }, 90_000);

  it('while it plans its first step (preflight): says "interrupted", the step and its machines, the run log; exits 130', async () => {
    const ssh = await silentServer();
    servers.push(ssh.close);
    // ECDSA keys: pki/ in a moment, so the run reaches the machines at once.
    const up = startUp(ssh.port, 'ecdsa-p256');
    // Both machines are asked for their facts (and never answer): the run is in preflight, the first step.
    await until(() => ssh.execs() >= 2);
    expect(ssh.execs(), up.seen.out + up.seen.err).toBeGreaterThanOrEqual(2);
    up.child.kill('SIGINT');
    expect(await up.exited, up.seen.out + up.seen.err).toBe(130);
    expect(up.seen.err).toMatch(/^interrupted \(SIGINT\):\n {2}up: step preflight was starting on server, node-0 \(connecting, planning\)\n {2}log of this run: logs\/\S+\.log\n/m);
    const log = /log of this run: (logs\/\S+\.log)/.exec(up.seen.err)![1]!;
    expect(existsSync(join(up.dir, log))).toBe(true);
  }, 90_000);
});

describe('what a run was doing', () => {
  it('each step with the machines it runs on now; the step being started when none runs yet', () => {
    const run = new InFlight('up', '/p/logs/up.log');
    expect(run.lines()[0]).toBe('up: no step had started yet');
    run.announce('bootstrap-workers', ['node-0', 'node-1']);
    expect(run.lines()[0]).toBe('up: step bootstrap-workers was starting on node-0, node-1 (connecting, planning)');
    run.start('bootstrap-workers', 'node-0');
    run.start('bootstrap-workers', 'node-1');
    run.start('routes', 'node-1');
    run.end('bootstrap-workers', 'node-0');
    expect(run.lines().slice(0, 2)).toEqual(['up: step bootstrap-workers was running on node-1', 'up: step routes was running on node-1']);
  });
});
