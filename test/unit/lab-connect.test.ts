// The lab and Multipass reach their machines through the one host connector (ssh2), not the system
// ssh: the lab's SSH probe (its boot wait and status) and Multipass's marker probe, against the
// in-process SSH server, with strict host keys from the project's known_hosts (never pinned).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { labConnector, LAB_PROBE } from '../../src/lab/connect.ts';
import { rebootFromInside } from '../../src/lab/control.ts';
import { sshProbe } from '../../src/lab/ssh-wait.ts';
import type { LabMachine } from '../../src/lab/types.ts';
import { sshProbe as multipassProbe } from '../../src/multipass/probe.ts';
import { KEYS, knownHostsLine, startTestServer, type TestServer } from '../fixtures/ssh/test-server.ts';

let dir: string;
let server: TestServer;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'hardway-lab-connect-'));
});
afterEach(async () => {
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

const machine: LabMachine = { hostname: 'node-0', fqdn: 'node-0.kubernetes.local', ip: '127.0.0.1', role: 'worker', unit: 'lab-node-0' };

/** The project files a lab or `multipass up` writes, for the test server's port. */
function projectFiles(knownHosts: string): void {
  writeFileSync(join(dir, 'cluster.yaml'), `ssh:\n  user: root\n  port: ${server.port}\n  identityFile: ${join(KEYS, 'client_ed25519')}\n  knownHosts: known_hosts\n`);
  writeFileSync(join(dir, 'known_hosts'), knownHosts);
}

describe('the lab reaches its machines through the host connector', () => {
  it('a machine presenting the recorded host key answers the probe: `true` ran there over ssh2', async () => {
    server = await startTestServer({ sandbox: dir });
    projectFiles(knownHostsLine(server.port, 'host_ed25519.pub', 'node-0'));
    expect(await sshProbe(labConnector(dir, LAB_PROBE), machine)).toEqual({ ok: true, stderr: '' });
    expect(server.stats.commands.join('\n')).toMatch(/\btrue\b/);
  });

  it('another host key fails the probe as a host-key problem, before anything runs, and is not pinned', async () => {
    server = await startTestServer({ sandbox: dir, hostKey: 'host_changed_ed25519' });
    const pinned = knownHostsLine(server.port, 'host_ed25519.pub', 'node-0');
    projectFiles(pinned);
    const r = await sshProbe(labConnector(dir, LAB_PROBE), machine);
    expect(r).toMatchObject({ ok: false, hostKey: true });
    expect(r.stderr).toMatch(/HOST KEY OF .* HAS CHANGED/);
    expect(server.stats).toMatchObject({ authAttempts: 0, commands: [] });
    expect(readFileSync(join(dir, 'known_hosts'), 'utf8')).toBe(pinned);
  });

  it('a machine whose key was never recorded is refused too (strict: never pinned on first sight)', async () => {
    server = await startTestServer({ sandbox: dir });
    projectFiles('');
    const r = await sshProbe(labConnector(dir, LAB_PROBE), machine);
    expect(r).toMatchObject({ ok: false, hostKey: true });
    expect(readFileSync(join(dir, 'known_hosts'), 'utf8')).toBe('');
  });

  it('nothing listening: not ok, not a host-key problem, the connector\'s error as the reason', async () => {
    server = await startTestServer({ sandbox: dir });
    projectFiles(knownHostsLine(server.port, 'host_ed25519.pub', 'node-0'));
    await server.close();
    const r = await sshProbe(labConnector(dir, LAB_PROBE), machine);
    expect(r.ok).toBe(false);
    expect(r.hostKey).toBeUndefined();
    expect(r.stderr).toMatch(/node-0/);
  });

  it('a reboot from inside is `systemctl reboot` run over the connector', async () => {
    server = await startTestServer({ sandbox: dir });
    projectFiles(knownHostsLine(server.port, 'host_ed25519.pub', 'node-0'));
    await rebootFromInside(labConnector(dir, LAB_PROBE), machine);
    expect(server.stats.commands.join('\n')).toMatch(/systemctl reboot/);
  });
});

describe('Multipass probes a VM through the host connector, its key looked up under its hostname', () => {
  it('at an address that is not pinned, the key pinned under the hostname lets it in (HostKeyAlias): the marker is read', async () => {
    server = await startTestServer({ sandbox: dir });
    projectFiles(knownHostsLine(server.port, 'host_ed25519.pub', 'node-0'));
    const r = await multipassProbe(dir, 'node-0', '127.0.0.1');
    // The sandbox has no marker file: logged in, no marker.
    expect(r).toMatchObject({ status: 'no-marker' });
    expect(server.stats.commands.join('\n')).toMatch(/cat \/etc\/hardway\/multipass-vm/);
  });

  it("the address's own pin does not count: a key pinned under the address but not the hostname is refused", async () => {
    server = await startTestServer({ sandbox: dir });
    projectFiles(knownHostsLine(server.port, 'host_ed25519.pub', '127.0.0.1') + knownHostsLine(server.port, 'host_changed_ed25519.pub', 'node-0'));
    const r = await multipassProbe(dir, 'node-0', '127.0.0.1');
    expect(r.status).toBe('host-key');
    expect(server.stats.commands).toEqual([]);
  });
});
