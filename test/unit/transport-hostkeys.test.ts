// Host keys against a project-local known_hosts: unknown refused or pinned with the flag, changed
// always refused with both fingerprints, hashed/negated/revoked entries. OpenSSH's ssh-keygen is
// the independent judge of fingerprints and of the file we write.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { SshSettings } from '../../src/cluster-settings.ts';
import { InputError } from '../../src/errors.ts';
import { sh } from '../../src/shell.ts';
import { createTransport, fingerprint, HostKeyError, KnownHosts, openTransport, type TransportOptions } from '../../src/transport/index.ts';
import { KEYS, key, knownHostsLine, startTestServer, testMachine, type TestServer } from '../fixtures/ssh/test-server.ts';

let dir: string;
let server: TestServer;
let knownHosts: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'hardway-hostkeys-'));
  knownHosts = join(dir, 'known_hosts');
});
afterEach(async () => {
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

const sshKeygenFingerprint = (pub: string) => execFileSync('ssh-keygen', ['-l', '-E', 'sha256', '-f', join(KEYS, pub)], { encoding: 'utf8' }).split(' ')[1]!;
const settings = (): SshSettings => ({ user: 'root', port: server.port, knownHosts: 'known_hosts', identityFile: join(KEYS, 'client_ed25519') });
const options = (extra: Partial<TransportOptions> = {}): TransportOptions => ({ dir, home: dir, env: {}, retry: { sleep: async () => undefined }, ...extra });
async function connect(extra: Partial<TransportOptions> = {}) {
  const t = await openTransport(testMachine(), settings(), options(extra));
  const r = await t.exec(sh`echo connected`);
  await t.close();
  return r.stdout;
}

describe('fingerprints', () => {
  it('are OpenSSH SHA256 fingerprints of the key blob', () => {
    for (const pub of ['host_ed25519.pub', 'host_rsa.pub', 'jump_ed25519.pub']) {
      const blob = Buffer.from(key(pub).toString('utf8').split(' ')[1]!, 'base64');
      expect(fingerprint(blob)).toBe(sshKeygenFingerprint(pub));
    }
  });
});

describe('host key verification', () => {
  it('refuses an unknown host, says how to accept it, tries once and authenticates nothing', async () => {
    server = await startTestServer({ sandbox: dir });
    const err = await connect().catch((e) => e);
    expect(err).toBeInstanceOf(HostKeyError);
    expect(err.problem).toBe('unknown');
    expect(err.message).toMatch(/^node-0: host key of root@127\.0\.0\.1:\d+ is not in .*known_hosts/);
    expect(err.message).toContain(sshKeygenFingerprint('host_ed25519.pub'));
    expect(err.hint).toContain('--accept-new-host-keys');
    expect(server.stats).toMatchObject({ connections: 1, authAttempts: 0, commands: [] });
  });

  it('pins an unknown host with acceptNewHostKeys under its name, FQDN and IP, in a file ssh-keygen reads', async () => {
    server = await startTestServer({ sandbox: dir });
    const log: string[] = [];
    expect(await connect({ acceptNewHostKeys: true, log: (l) => log.push(l) })).toBe('connected\n');
    expect(log.join('\n')).toMatch(/node-0: pinned new host key SHA256:\S+ \(ssh-ed25519\)/);
    const p = server.port;
    expect(readFileSync(knownHosts, 'utf8')).toBe(
      `[node-0]:${p},[node-0.kubernetes.local]:${p},[127.0.0.1]:${p} ${key('host_ed25519.pub').toString('utf8').split(' ').slice(0, 2).join(' ')}\n`,
    );
    for (const name of ['node-0', 'node-0.kubernetes.local', '127.0.0.1']) {
      expect(execFileSync('ssh-keygen', ['-F', `[${name}]:${p}`, '-f', knownHosts], { encoding: 'utf8' })).toContain('ssh-ed25519');
    }
    // Pinned: the next run needs no flag.
    expect(await connect()).toBe('connected\n');
  });

  it('refuses a changed key even with acceptNewHostKeys, naming the machine and both fingerprints; nothing runs', async () => {
    server = await startTestServer({ sandbox: dir, hostKey: 'host_changed_ed25519' });
    writeFileSync(knownHosts, knownHostsLine(server.port, 'host_ed25519.pub'));
    const err = await connect({ acceptNewHostKeys: true }).catch((e) => e);
    expect(err).toBeInstanceOf(HostKeyError);
    expect(err.problem).toBe('changed');
    expect(err.message).toMatch(/^node-0: HOST KEY OF root@127\.0\.0\.1:\d+ HAS CHANGED/);
    expect(err.message).toContain(`pinned ${sshKeygenFingerprint('host_ed25519.pub')}`);
    expect(err.message).toContain(`presented ${sshKeygenFingerprint('host_changed_ed25519.pub')}`);
    expect(err.exitCode).toBe(1);
    expect(server.stats).toMatchObject({ connections: 1, authAttempts: 0, commands: [] });
    expect(readFileSync(knownHosts, 'utf8')).toBe(knownHostsLine(server.port, 'host_ed25519.pub'));
  });

  it('refuses as changed a machine that now only has a key of another type', async () => {
    server = await startTestServer({ sandbox: dir, hostKey: 'host_rsa' });
    writeFileSync(knownHosts, knownHostsLine(server.port, 'host_ed25519.pub'));
    const err = await connect().catch((e) => e);
    expect(err).toBeInstanceOf(HostKeyError);
    expect(err.problem).toBe('changed');
    expect(err.message).toContain(`presented ${sshKeygenFingerprint('host_rsa.pub')}`);
  });

  it('a refusal is final for the run: later use of the transport fails the same way without dialing again', async () => {
    server = await startTestServer({ sandbox: dir, hostKey: 'host_changed_ed25519' });
    writeFileSync(knownHosts, knownHostsLine(server.port, 'host_ed25519.pub'));
    const t = createTransport(testMachine(), settings(), options(), new KnownHosts(knownHosts));
    const first = await t.exec(sh`true`).catch((e) => e);
    const second = await t.exec(sh`true`).catch((e) => e);
    expect(first).toBeInstanceOf(HostKeyError);
    expect(second).toBe(first);
    expect(server.stats.connections).toBe(1);
    await t.close();
  });

  it('finds the machine by hostname, by FQDN, and in entries hashed by ssh-keygen -H', async () => {
    server = await startTestServer({ sandbox: dir });
    for (const name of ['node-0', 'node-0.kubernetes.local']) {
      writeFileSync(knownHosts, knownHostsLine(server.port, 'host_ed25519.pub', name));
      expect(await connect()).toBe('connected\n');
    }
    writeFileSync(knownHosts, knownHostsLine(server.port, 'host_ed25519.pub', '127.0.0.1'));
    execFileSync('ssh-keygen', ['-H', '-f', knownHosts], { stdio: 'ignore' });
    expect(readFileSync(knownHosts, 'utf8')).toMatch(/^\|1\|/);
    expect(await connect()).toBe('connected\n');
  });

  it('honours wildcards and negations, and refuses a key marked @revoked', async () => {
    server = await startTestServer({ sandbox: dir });
    const [type, b64] = key('host_ed25519.pub').toString('utf8').split(' ');
    writeFileSync(knownHosts, `# comment\n[127.0.0.*]:${server.port} ${type} ${b64}\n`);
    expect(await connect()).toBe('connected\n');
    writeFileSync(knownHosts, `*,![*]:${server.port} ${type} ${b64}\n`);
    expect((await connect().catch((e) => e)).problem).toBe('unknown');
    writeFileSync(knownHosts, `${knownHostsLine(server.port)}@revoked * ${type} ${b64}\n`);
    const revoked = await connect({ acceptNewHostKeys: true }).catch((e) => e);
    expect(revoked.problem).toBe('revoked');
    expect(revoked.message).toContain('@revoked');
  });

  it('rejects a malformed known_hosts line as an input error naming file and line', () => {
    writeFileSync(knownHosts, `# ok\n10.240.0.20 ssh-ed25519\n`);
    const err = (() => {
      try {
        new KnownHosts(knownHosts);
      } catch (e) {
        return e as InputError;
      }
    })();
    expect(err).toBeInstanceOf(InputError);
    expect(err?.where).toEqual({ file: knownHosts, line: 2 });
  });
});
