// Where to connect: ssh config (a temp file, never the real ~/.ssh), cluster.yaml and -i, and a
// ProxyJump through a second in-process server acting as the jump host.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { defaultSettings, type SshSettings } from '../../src/cluster-settings.ts';
import { InputError } from '../../src/errors.ts';
import type { Machine } from '../../src/inventory.ts';
import { sh } from '../../src/shell.ts';
import { resolveRoute, type EndpointContext } from '../../src/transport/endpoint.ts';
import { HostKeyError, openTransport } from '../../src/transport/index.ts';
import { KEYS, knownHostsLine, startTestServer, testMachine, type TestServer } from '../fixtures/ssh/test-server.ts';

let dir: string;
let home: string;
const servers: TestServer[] = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'hardway-sshconfig-'));
  home = join(dir, 'home');
  mkdirSync(join(home, '.ssh'), { recursive: true });
  mkdirSync(join(home, 'keys'));
  for (const k of ['id_node0', 'id_all', 'id_bastion']) writeFileSync(join(home, 'keys', k), 'not read by resolveRoute');
});
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
  rmSync(dir, { recursive: true, force: true });
});

const node0: Machine = { ip: '10.240.0.20', fqdn: 'node-0.kubernetes.local', hostname: 'node-0', role: 'worker', podSubnet: '10.200.0.0/24', line: 2 };
const ssh = (extra: Partial<SshSettings> = {}): SshSettings => ({ ...defaultSettings().ssh, ...extra });
const ctx = (extra: Partial<EndpointContext> = {}): EndpointContext => ({
  dir, home, cwd: dir, localUser: 'me', sshConfigFile: join(dir, 'ssh_config'), ...extra,
});
const CONFIG = `
Host node-0
  HostName 127.0.0.1
  User admin
  Port 2222
  IdentityFile ~/keys/id_node0
  ProxyJump bastion

Host bastion
  HostName 192.0.2.1
  User jumper
  Port 2022

Host *.kubernetes.local 10.240.0.*
  User fallback

Host *
  IdentityFile %d/keys/id_all
`;

describe('resolveRoute', () => {
  it('applies Host, HostName, User, Port, IdentityFile (with ~ and %d) and ProxyJump from the ssh config', () => {
    writeFileSync(join(dir, 'ssh_config'), CONFIG);
    const route = resolveRoute(node0, ssh(), ctx());
    expect(route.target).toEqual({
      display: 'admin@127.0.0.1:2222',
      host: '127.0.0.1',
      port: 2222,
      user: 'admin',
      identityFiles: [join(home, 'keys/id_node0'), join(home, 'keys/id_all')],
      hostKeyNames: ['[node-0]:2222', '[node-0.kubernetes.local]:2222', '[10.240.0.20]:2222', '[127.0.0.1]:2222'],
    });
    expect(route.jumps).toEqual([{
      display: 'jump host bastion (jumper@192.0.2.1:2022)',
      host: '192.0.2.1',
      port: 2022,
      user: 'jumper',
      identityFiles: [join(home, 'keys/id_all')],
      hostKeyNames: ['[bastion]:2022', '[192.0.2.1]:2022'],
    }]);
  });

  it('matches Host patterns against the FQDN and IP when the hostname has no block', () => {
    writeFileSync(join(dir, 'ssh_config'), CONFIG);
    const route = resolveRoute({ ...node0, hostname: 'node-1', fqdn: 'node-1.kubernetes.local', ip: '10.240.0.21' }, ssh(), ctx());
    expect(route.target).toMatchObject({ host: '10.240.0.21', port: 22, user: 'fallback' });
    expect(route.target.hostKeyNames).toEqual(['node-1', 'node-1.kubernetes.local', '10.240.0.21']);
    expect(route.jumps).toEqual([]);
  });

  it('lets -i and non-default cluster.yaml values win over the ssh config', () => {
    writeFileSync(join(dir, 'ssh_config'), CONFIG);
    writeFileSync(join(dir, 'project_key'), 'k');
    const route = resolveRoute(node0, ssh({ user: 'ops', port: 2200, identityFile: 'project_key', jumpHost: 'gw@gate.example:2201' }),
      ctx({ identityFiles: [join(home, 'keys/id_bastion')] }));
    expect(route.target).toMatchObject({ user: 'ops', port: 2200, host: '127.0.0.1' });
    expect(route.target.identityFiles).toEqual([join(home, 'keys/id_bastion'), join(dir, 'project_key'), join(home, 'keys/id_node0'), join(home, 'keys/id_all')]);
    expect(route.jumps.map((j) => j.display)).toEqual(['jump host gate.example (gw@gate.example:2201)']);
  });

  it('reads ~/.ssh/config by default, follows ProxyJump chains and ProxyJump none', () => {
    writeFileSync(join(home, '.ssh/config'), 'Host node-0\n  ProxyJump a,root@b:2\nHost node-1\n  ProxyJump none\n');
    const chain = resolveRoute(node0, ssh(), ctx({ sshConfigFile: undefined }));
    expect(chain.jumps.map((j) => j.display)).toEqual(['jump host a (me@a:22)', 'jump host b (root@b:2)']);
    expect(resolveRoute({ ...node0, hostname: 'node-1' }, ssh(), ctx({ sshConfigFile: undefined })).jumps).toEqual([]);
  });

  it('uses cluster.yaml ssh.configFile (relative to the project) instead of ~/.ssh/config; a missing one is an input error', () => {
    writeFileSync(join(home, '.ssh/config'), 'Host node-0\n  User from-home\n');
    writeFileSync(join(dir, 'project_ssh_config'), 'Host node-0\n  User from-project\n');
    expect(resolveRoute(node0, ssh({ configFile: 'project_ssh_config' }), ctx({ sshConfigFile: undefined })).target.user).toBe('from-project');
    expect(() => resolveRoute(node0, ssh({ configFile: 'nope' }), ctx())).toThrow(InputError);
  });

  it('falls back to the default keys in ~/.ssh when nothing names one', () => {
    writeFileSync(join(home, '.ssh/id_ed25519'), 'k');
    expect(resolveRoute(node0, ssh(), ctx()).target.identityFiles).toEqual([join(home, '.ssh/id_ed25519')]);
  });
});

describe('ProxyJump through an in-process jump host', () => {
  async function servers2() {
    const target = await startTestServer({ sandbox: dir });
    const jump = await startTestServer({ sandbox: dir, hostKey: 'jump_ed25519', allowForwarding: true });
    servers.push(target, jump);
    writeFileSync(join(dir, 'ssh_config'),
      `Host bastion\n  HostName 127.0.0.1\n  Port ${jump.port}\n  User root\n  IdentityFile ${join(KEYS, 'client_ed25519')}\n` +
      `Host node-0\n  ProxyJump bastion\n`);
    return { target, jump };
  }
  const settings = (port: number): SshSettings => ({ user: 'root', port, knownHosts: 'known_hosts', identityFile: join(KEYS, 'client_ed25519') });
  const opts = (extra = {}) => ({ dir, home, env: {}, sshConfigFile: join(dir, 'ssh_config'), retry: { attempts: 1 }, ...extra });

  it('runs the machine connection over a direct-tcpip stream of the jump host, both host keys verified', async () => {
    const { target, jump } = await servers2();
    writeFileSync(join(dir, 'known_hosts'), knownHostsLine(target.port) + knownHostsLine(jump.port, 'jump_ed25519.pub', 'bastion'));
    const t = await openTransport(testMachine(), settings(target.port), opts());
    expect((await t.exec(sh`echo through-the-jump`)).stdout).toBe('through-the-jump\n');
    await t.upload(join(dir, 'via-jump.txt'), { data: Buffer.from('hi') }, { mode: 0o600 });
    expect(readFileSync(join(dir, 'via-jump.txt'), 'utf8')).toBe('hi');
    await t.close();
    expect(jump.stats.forwards).toEqual([`127.0.0.1:${target.port}`]);
    expect(target.stats.connections).toBe(1);
  });

  it('refuses an unknown jump host key, naming the jump host; the machine is never reached', async () => {
    const { target, jump } = await servers2();
    writeFileSync(join(dir, 'known_hosts'), knownHostsLine(target.port));
    const err = await openTransport(testMachine(), settings(target.port), opts()).catch((e) => e);
    expect(err).toBeInstanceOf(HostKeyError);
    expect(err.message).toMatch(/^node-0: host key of jump host bastion \(root@127\.0\.0\.1:\d+\) is not in/);
    expect(jump.stats.forwards).toEqual([]);
    expect(target.stats.connections).toBe(0);
    // With the flag the jump host is pinned under its alias and address.
    const t = await openTransport(testMachine(), settings(target.port), opts({ acceptNewHostKeys: true }));
    await t.close();
    expect(readFileSync(join(dir, 'known_hosts'), 'utf8')).toContain(`[bastion]:${jump.port},[127.0.0.1]:${jump.port} ssh-ed25519 `);
  });
});
