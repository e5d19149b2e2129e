// A login that is not root, raised with sudo: against the in-process ssh2.Server logged in as the
// user nobody (commands and sftp-server run as nobody), with the server playing sudo (a command
// line that starts with `sudo -n` runs as root, through a `sudo` first in PATH that answers as the
// real one does: it runs the command, or refuses with sudo's own messages).
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sh } from '../../src/shell.ts';
import { openTransport, type SshTransport, type TransportOptions } from '../../src/transport/index.ts';
import { SudoError } from '../../src/transport/become.ts';
import { loggedTransport } from '../../src/engine/logged-transport.ts';
import { Redactor } from '../../src/ui/redact.ts';
import { KEYS, knownHostsLine, startTestServer, testMachine, type TestServer } from '../fixtures/ssh/test-server.ts';

const NOBODY = 65534;
let dir: string;
let root: string;
let bin: string;
let server: TestServer;
let transport: SshTransport | undefined;

/** sudo as the machine has it: NOPASSWD (runs the command), or refusing with the real sudo's words. */
function sudoAnswers(refusal?: string): void {
  const body = refusal === undefined ? '[ "$1" = -n ] && shift\nexec "$@"\n' : `printf '%s\\n' ${JSON.stringify(refusal)} >&2\nexit 1\n`;
  writeFileSync(join(bin, 'sudo'), `#!/bin/sh\n${body}`, { mode: 0o755 });
}

async function start(extra: Partial<TransportOptions> = {}, ssh: Record<string, unknown> = {}): Promise<SshTransport> {
  server = await startTestServer({ sandbox: root, login: { uid: NOBODY, gid: NOBODY, sudoBin: bin } });
  writeFileSync(join(dir, 'known_hosts'), knownHostsLine(server.port));
  const settings = { user: 'nobody', port: server.port, knownHosts: 'known_hosts', identityFile: join(KEYS, 'client_ed25519'), ...ssh };
  transport = await openTransport(testMachine(), settings, { dir, home: dir, env: {}, retry: { sleep: async () => undefined }, ...extra });
  return transport;
}

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'hardway-sudo-'));
  // The login user must reach the sandbox, as a login user reaches / on a machine.
  chmodSync(dir, 0o755);
  root = join(dir, 'remote');
  bin = join(dir, 'bin');
  mkdirSync(root, { mode: 0o755 });
  mkdirSync(bin);
  sudoAnswers();
});
afterEach(async () => {
  await transport?.close();
  transport = undefined;
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

const leftovers = (d: string) => readdirSync(d).filter((n) => n.includes('.hardway-tmp-'));

describe('commands through sudo -n', () => {
  it('runs every command as root, each as one sudo -n of /bin/sh, after one sudo check per connection', async () => {
    const t = await start();
    const r = await t.exec(sh`id -u; printf '%s\n' "$HARDWAY_EXEC" | wc -c`);
    expect(r.code).toBe(0);
    expect(r.stdout.split('\n')[0]).toBe('0');
    const facts = await t.exec(sh`id -u && id -u && id -u`, { stdin: 'script' });
    expect(facts.stdout).toBe('0\n0\n0\n');
    const cmds = server.stats.commands;
    expect(cmds[0]).toMatch(/^exec env HARDWAY_EXEC=[0-9a-f]{16} "\$\{SHELL:-\/bin\/sh\}" -c 'sudo -n true'$/);
    expect(cmds.slice(1)).toHaveLength(2);
    for (const c of cmds.slice(1)) expect(c).toMatch(/^exec sudo -n env HARDWAY_EXEC=[0-9a-f]{16} \/bin\/sh -c '/);
  });

  it('a command that outlives its time limit is killed by a kill raised as it was (its processes are root\'s)', async () => {
    const t = await start();
    const marker = join(dir, 'still-running');
    await expect(t.exec(sh`sleep 5 && touch ${marker}`, { timeoutMs: 300 })).rejects.toThrow(/timed out after 300ms/);
    const kill = server.stats.commands.find((c) => c.includes('/environ'));
    expect(kill).toMatch(/^sudo -n \/bin\/sh -c 'for f in /);
    await new Promise((r) => setTimeout(r, 5500));
    expect(readdirSync(dir)).not.toContain('still-running');
  }, 15_000);

  it('as root (the default become then), commands are not wrapped and sudo is never asked', async () => {
    const t = await start({}, { user: 'root' });
    // Root login on this server still runs as nobody; what matters is what was sent.
    await t.exec(sh`true`);
    expect(server.stats.commands.some((c) => c.includes('sudo'))).toBe(false);
  });

  it('ssh.become: none runs as the login user, unwrapped', async () => {
    const t = await start({}, { become: 'none' });
    expect((await t.exec(sh`id -u`)).stdout.trim()).toBe(String(NOBODY));
    expect(server.stats.commands.some((c) => c.includes('sudo'))).toBe(false);
  });

  it('the run log shows each command as it runs: with sudo -n', async () => {
    const t = await start();
    const lines: string[] = [];
    const logged = loggedTransport(t, { log: { path: '', write: (l: string) => void lines.push(l), close: () => undefined } as never });
    await logged.exec(sh`systemctl is-active kubelet`);
    expect(lines[0]).toBe("$ sudo -n sh -c 'systemctl is-active kubelet'");
    expect(t.describe(sh`true`)).toBe('sudo -n sh -c true');
  });
});

describe('sudo that refuses: exit 1 naming machine, user and the line to add, never a wait for a password', () => {
  const cases: Array<[string, string, RegExp]> = [
    ['a password is required (no NOPASSWD)', 'sudo: a password is required', /sudo asks for a password/],
    ['the user is not in sudoers', 'nobody is not in the sudoers file.', /nobody may not use sudo there/],
    ['requiretty', 'sudo: sorry, you must have a tty to run sudo', /requiretty/],
  ];
  for (const [what, said, reason] of cases) {
    it(what, async () => {
      sudoAnswers(said);
      const e = await start().then(() => undefined, (err: unknown) => err);
      expect(e).toBeInstanceOf(SudoError);
      const err = e as SudoError;
      expect(err.exitCode).toBe(1);
      expect(err.message).toMatch(/^node-0: nobody cannot run commands as root with sudo -n: /);
      expect(err.message).toMatch(reason);
      expect(err.message).toContain(said);
      expect(err.hint).toContain('nobody ALL=(ALL) NOPASSWD:ALL');
      expect(err.hint).toContain('/etc/sudoers.d/nobody');
      // Printed as is: nothing in it looks like a secret to the run's redactor.
      expect(new Redactor().redact(`${err.message}\n${err.hint}`)).toBe(`${err.message}\n${err.hint}`);
      // Only the check ran: nothing was done on the machine.
      expect(server.stats.commands).toHaveLength(1);
    });
  }

  it('sudo missing on the machine says to install it', async () => {
    rmSync(join(bin, 'sudo'));
    const e = (await start().catch((err: unknown) => err)) as SudoError;
    expect(e).toBeInstanceOf(SudoError);
    expect(e.message).toMatch(/sudo is not installed/);
    expect(e.hint).toMatch(/apt-get install sudo/);
  });

  it("a root login a cloud image refuses ('Please login as the user ...') names the user to set", async () => {
    const t = await start({}, { user: 'root' });
    await expect(t.exec(sh`echo 'Please login as the user "debian" rather than the user "root".'; exit 142`)).rejects.toThrow(
      /refuses commands from root: it says to log in as debian/,
    );
  });
});

describe('uploads of a login raised with sudo', () => {
  it('land with owner and mode through a temp file beside the target that is root\'s and 0600 before any byte, nothing left', async () => {
    const t = await start();
    const target = join(root, 'etc/kubernetes/secret.key');
    let seen: { mode: number; uid: number; size: number } | undefined;
    server.beforeExecStdin = async (command) => {
      if (!command.includes('cat >')) return;
      // The command runs; its bytes are held back: the temp file it made must already be private.
      const dirOf = join(root, 'etc/kubernetes');
      for (let i = 0; i < 200 && !seen; i++) {
        const tmp = readdirSync(dirOf).find((n) => n.startsWith('.secret.key.hardway-tmp-'));
        if (tmp) {
          const st = statSync(join(dirOf, tmp));
          seen = { mode: st.mode & 0o7777, uid: st.uid, size: st.size };
        } else await new Promise((r) => setTimeout(r, 10));
      }
    };
    await t.upload(target, { data: Buffer.from('private\n') }, { mode: 0o600 });
    expect(seen).toEqual({ mode: 0o600, uid: 0, size: 0 });
    expect(readFileSync(target, 'utf8')).toBe('private\n');
    const st = statSync(target);
    expect([st.mode & 0o7777, st.uid, st.gid]).toEqual([0o600, 0, 0]);
    expect(leftovers(join(root, 'etc/kubernetes'))).toEqual([]);
    // Made by root (sudo), not by the login user; no SFTP session at all.
    expect(statSync(join(root, 'etc/kubernetes')).uid).toBe(0);
    expect(server.stats.sftpSessions).toBe(0);
  });

  it('reaches a directory only root can enter (as containerd makes /etc/cni/net.d, 0700)', async () => {
    const t = await start();
    mkdirSync(join(root, 'etc/cni/net.d'), { recursive: true, mode: 0o700 });
    chmodSync(join(root, 'etc/cni/net.d'), 0o700);
    await t.upload(join(root, 'etc/cni/net.d/10-bridge.conf'), { data: Buffer.from('{}\n') }, { mode: 0o644 });
    expect(readFileSync(join(root, 'etc/cni/net.d/10-bridge.conf'), 'utf8')).toBe('{}\n');
  });

  it('streams a file from disk and sets a named owner and a mode with setuid bits after chown', async () => {
    const t = await start();
    const big = join(dir, 'big.bin');
    const bytes = randomBytes(3 * 1024 * 1024 + 17);
    writeFileSync(big, bytes);
    const target = join(root, 'bin/tool');
    await t.upload(target, { file: big }, { mode: 0o4755, owner: 'nobody:nogroup' });
    expect(readFileSync(target).equals(bytes)).toBe(true);
    const st = statSync(target);
    expect([st.mode & 0o7777, st.uid]).toEqual([0o4755, NOBODY]);
  });

  it('replaces an existing root file atomically (a new inode renamed over it)', async () => {
    const t = await start();
    const target = join(root, 'hosts');
    writeFileSync(target, 'old\n', { mode: 0o644 });
    const before = statSync(target).ino;
    await t.upload(target, { data: Buffer.from('new\n') }, { mode: 0o644 });
    expect(readFileSync(target, 'utf8')).toBe('new\n');
    expect(statSync(target).ino).not.toBe(before);
    expect(leftovers(root)).toEqual([]);
  });

  it('a stream cut short (a run killed midway: the command sees EOF) installs nothing and leaves nothing', async () => {
    const t = await start();
    const target = join(root, 'kubelet');
    writeFileSync(target, 'old\n');
    server.cutExecStdinAfter = 1000;
    await expect(t.upload(target, { data: Buffer.alloc(5000, 1) }, { mode: 0o755 })).rejects.toThrow(/upload cut short: 1000 of 5000 bytes arrived/);
    expect(readFileSync(target, 'utf8')).toBe('old\n');
    expect(leftovers(root)).toEqual([]);
  });

  it("removes a killed run's temp file at the next upload into the same directory", async () => {
    writeFileSync(join(root, '.kubelet.hardway-tmp-0123456789ab'), 'partial', { mode: 0o600 });
    const t = await start();
    await t.upload(join(root, 'kubelet'), { data: Buffer.from('whole') }, { mode: 0o755 });
    expect(leftovers(root)).toEqual([]);
  });

  it('a failed move removes the temp file', async () => {
    const t = await start();
    // The target is a directory: mv -T cannot put a file over it (nor into it).
    mkdirSync(join(root, 'taken/x'), { recursive: true });
    writeFileSync(join(root, 'taken/x/keep'), '');
    await expect(t.upload(join(root, 'taken/x'), { data: Buffer.from('y') }, { mode: 0o644 })).rejects.toThrow(/node-0/);
    expect(leftovers(join(root, 'taken'))).toEqual([]);
    expect(readdirSync(join(root, 'taken/x'))).toEqual(['keep']);
  });
});
