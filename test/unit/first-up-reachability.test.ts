// `up` in a fresh project tries what can fail without pki/ first (issue 36 point 4): a machine that
// does not answer (a loopback port where nothing listens), or no SSH key to offer, ends the run
// within seconds, one line per machine and what to check, before any key is made: pki/ is not
// created. The project is the README's "your own machines" one; ssh_config points its names at
// 127.0.0.x, so nothing leaves this machine.
import { spawn } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const BIN = resolve(import.meta.dirname, '../../bin/hardway.mjs');

/** A loopback port where nothing listens (bound once, then closed). */
async function deadPort(host: string): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, host, r));
  const { port } = server.address() as { port: number };
  await new Promise((r) => server.close(r));
  return port;
}

/** The README's three machines, each reached at 127.0.0.x:port through the project's ssh_config; a HOME with a key or none. */
async function project(withKey: boolean): Promise<{ dir: string; home: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'hw-preflight-'));
  const home = join(dir, 'home');
  mkdirSync(join(home, '.ssh'), { recursive: true });
  if (withKey) execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', join(home, '.ssh', 'id_ed25519')]);
  writeFileSync(join(dir, 'machines.txt'), '10.240.0.10 server.kubernetes.local server\n10.240.0.20 node-0.kubernetes.local node-0 10.200.0.0/24\n10.240.0.21 node-1.kubernetes.local node-1 10.200.1.0/24\n');
  writeFileSync(join(dir, 'cluster.yaml'), 'ssh:\n  configFile: ssh_config\n');
  const hosts = [['server', '127.0.0.2'], ['node-0', '127.0.0.3'], ['node-1', '127.0.0.4']];
  const lines = await Promise.all(hosts.map(async ([name, ip]) => `Host ${name}\n  HostName ${ip}\n  Port ${await deadPort(ip!)}\n`));
  writeFileSync(join(dir, 'ssh_config'), lines.join(''));
  return { dir, home };
}

/** Runs `hardway ...args` as a process in `dir` with HOME `home` and no ssh-agent; its output, exit code and time. */
function hardway(args: string[], dir: string, home: string): Promise<{ code: number | null; out: string; ms: number }> {
  const started = Date.now();
  const env = { ...process.env, HOME: home, SSH_AUTH_SOCK: '', HARDWAY_NO_BUNDLE: '1', CI: 'true', COLUMNS: '200' };
  const child = spawn(process.execPath, [BIN, ...args], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  return new Promise((r) => child.on('close', (code) => r({ code, out, ms: Date.now() - started })));
}

/** An error wrapped to 80 columns (stderr is no terminal here), as one line. */
const flat = (text: string) => text.replace(/\n {2,}/g, ' ');

describe('up in a fresh project: preflight before pki/', () => {
  it('machines that do not answer: within 15 s, one line per machine and what to check; pki/ not made', async () => {
    const { dir, home } = await project(true);
    const r = await hardway(['up', '--accept-new-host-keys'], dir, home);
    expect(r.code, r.out).toBe(1);
    expect(r.ms).toBeLessThan(15_000);
    expect(flat(r.out)).toMatch(/^preflight: 3 machine\(s\): a key to offer, SSH and host key, before pki\/ is made\.\.\.$/m);
    for (const [name, ip] of [['server', '127.0.0.2'], ['node-0', '127.0.0.3'], ['node-1', '127.0.0.4']]) {
      expect(r.out).toMatch(new RegExp(`^preflight: ${name}: cannot connect to root@${ip.replace(/\./g, '\\.')}:\\d+: connection refused$`, 'm'));
    }
    // The hint the three share, once.
    expect(r.out.match(/check that the machine is up/g)).toHaveLength(1);
    expect(flat(r.out)).toContain('error: 3 of 3 machine(s) cannot be worked on (server, node-0, node-1); nothing was made or changed');
    expect(existsSync(join(dir, 'pki'))).toBe(false);
    expect(r.out).not.toContain('pki: checking');
  }, 30_000);

  it('no SSH key to offer: says so for each machine, before connecting; pki/ not made', async () => {
    const { dir, home } = await project(false);
    const r = await hardway(['up'], dir, home);
    expect(r.code, r.out).toBe(1);
    expect(r.ms).toBeLessThan(15_000);
    expect(r.out).toMatch(/^preflight: server: no SSH key to offer root@127\.0\.0\.2:\d+$/m);
    expect(flat(r.out)).toContain('hint: pass -i KEY, set ssh.identityFile in cluster.yaml, or load a key into ssh-agent');
    expect(existsSync(join(dir, 'pki'))).toBe(false);
  }, 30_000);
});
