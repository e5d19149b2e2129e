// pin-hosts planning on fake machines: facts in, changes out. A converged machine plans nothing;
// a fresh one plans exactly the hosts file, the cloud-init template and the hostname.
import { describe, expect, it } from 'vitest';
import { pinHostsStep } from '../../src/steps/pin-hosts.ts';
import { HOSTS_MARKERS } from '../../src/layout.ts';
import { hostsBlock } from '../../src/render/hosts.ts';
import { DEBIAN_HOSTS_TEMPLATE, DEBIAN_OS_RELEASE, FakeTransport, type FakeMachineSetup } from '../fixtures/fake-transport.ts';
import { fakeCluster, inventoryOf, runEngine } from './engine.helpers.ts';

const TEMPLATE = '/etc/cloud/templates/hosts.debian.tmpl';
const BLOCK = hostsBlock(inventoryOf());

/** A Debian 12 cloud machine as it boots before pin-hosts: cloud-init manages /etc/hosts. */
function freshDebian(hostname: string, over: Partial<FakeMachineSetup> = {}): FakeMachineSetup {
  return {
    hostname: 'debian',
    cloudHostname: hostname,
    cloudFqdn: `${hostname}.kubernetes.local`,
    files: {
      '/etc/hostname': 'debian\n',
      '/etc/hosts': '127.0.0.1\tlocalhost\n127.0.1.1\tdebian\n\n::1     localhost ip6-localhost ip6-loopback\nff02::1 ip6-allnodes\n',
      '/etc/os-release': DEBIAN_OS_RELEASE,
      '/etc/cloud/cloud.cfg': 'users:\n   - default\nsystem_info:\n   distro: debian\n',
      '/etc/cloud/cloud.cfg.d/90-lab.cfg': 'datasource_list: [ NoCloud, None ]\n',
      '/var/lib/cloud/instance/cloud-config.txt': '#cloud-config\nhostname: x\nmanage_etc_hosts: true\n',
      [TEMPLATE]: DEBIAN_HOSTS_TEMPLATE,
    },
    ...over,
  };
}

describe('pin-hosts on a fresh Debian machine with cloud-init', () => {
  it('plans exactly /etc/hosts, the template, the hostname and cloud-init regenerating /etc/hosts', async () => {
    const inv = inventoryOf();
    const fakes = fakeCluster(inv, (h) => freshDebian(h));
    const { result, output } = await runEngine([pinHostsStep], inv, fakes, { dryRun: true });
    expect(result.results.map((r) => r.changes)).toEqual([4, 4, 4]);
    const node0 = output.split('\n').filter((l) => l.startsWith('node-0:   put') || l.startsWith('node-0:   run'));
    expect(node0).toEqual([
      'node-0:   put /etc/hosts 0644 root:root (content differs)',
      `node-0:   put ${TEMPLATE} 0644 root:root (content differs)`,
      'node-0:   run: hostnamectl set-hostname node-0 (hostname is "debian" (/etc/hostname "debian"), want "node-0")',
      'node-0:   run: cloud-init single --name update_etc_hosts --frequency always (cloud-init manages /etc/hosts: regenerate it from the template now, as every boot will)',
    ]);
    // The diff of each file: the block before the first address line, the stale 127.0.1.1 line rewritten.
    expect(output).toContain(
      [
        'node-0:     @@ -1,5 +1,10 @@',
        `node-0:     +${HOSTS_MARKERS.begin}`,
        'node-0:     +10.240.0.10 server.kubernetes.local server',
        'node-0:     +10.240.0.20 node-0.kubernetes.local node-0',
        'node-0:     +10.240.0.21 node-1.kubernetes.local node-1',
        `node-0:     +${HOSTS_MARKERS.end}`,
        'node-0:      127.0.0.1\tlocalhost',
        'node-0:     -127.0.1.1\tdebian',
        'node-0:     +127.0.1.1 node-0.kubernetes.local node-0',
      ].join('\n'),
    );
    expect(output).toContain(`node-0:     +++ ${TEMPLATE} (planned)`);
    for (const f of fakes.values()) expect(f.changesRun).toEqual([]);
  });

  it('converges: writes the files, sets the hostname, survives cloud-init regenerating /etc/hosts, and a rerun plans nothing', async () => {
    const inv = inventoryOf();
    const fakes = fakeCluster(inv, (h) => freshDebian(h));
    const first = await runEngine([pinHostsStep], inv, fakes);
    expect(first.result).toMatchObject({ ok: true, changed: 12, failed: 0 });
    const node1 = fakes.get('node-1')!;
    expect(node1.hostname).toBe('node-1');
    expect(node1.text('/etc/hostname')).toBe('node-1\n');
    expect(node1.changesRun).toEqual(['hostnamectl set-hostname node-1', 'cloud-init single --name update_etc_hosts --frequency always']);
    expect(node1.uploads.map((u) => u.path)).toEqual(['/etc/hosts', TEMPLATE]);

    // The template keeps its header first and gets the block before the templated 127.0.1.1 line.
    const tmpl = node1.text(TEMPLATE);
    expect(tmpl.startsWith('## template:jinja\n')).toBe(true);
    expect(tmpl).toContain(`replaced with the local-hostname -#}\n${BLOCK}127.0.1.1 {{fqdn}} {{hostname}}\n`);
    // /etc/hosts is now what cloud-init rendered from that template: the block is in it.
    const hosts = node1.text('/etc/hosts');
    expect(hosts).toContain(BLOCK + '127.0.1.1 node-1.kubernetes.local node-1\n');
    expect(hosts).not.toContain('{{');

    const second = await runEngine([pinHostsStep], inv, fakes);
    expect(second.result).toMatchObject({ ok: true, changed: 0 });
    for (const f of fakes.values()) f.commands.length = 0;
    const third = await runEngine([pinHostsStep], inv, fakes);
    expect(third.result.changed).toBe(0);
    // A converged rerun only reads and checks names; cloud-init is not run again.
    for (const f of fakes.values()) expect(f.changesRun).toEqual([]);
  });

  it('fails verification, naming the machine, when cloud-init renders a different hostname than machines.txt', async () => {
    const inv = inventoryOf();
    const fakes = fakeCluster(inv, (h) => freshDebian(h, { cloudHostname: 'old-name', cloudFqdn: 'old-name.example' }));
    const { result } = await runEngine([pinHostsStep], inv, fakes, { only: ['node-0'] });
    expect(result.results[0]!.status).toBe('failed');
    expect(result.results[0]!.error).toMatch(/^node-0: after cloud-init regenerated \/etc\/hosts from its template, pin-hosts would change it again: \/etc\/hosts/);
  });

  it('fails verification when a name does not resolve to its IP on the machine', async () => {
    const inv = inventoryOf();
    const fakes = fakeCluster(inv, (h) => freshDebian(h));
    fakes.get('node-0')!.getentOverrides.set('server', '10.9.9.9        server');
    const { result } = await runEngine([pinHostsStep], inv, fakes);
    expect(result.results.map((r) => r.status)).toEqual(['changed', 'failed', 'changed']);
    expect(result.results[1]!.error).toContain('node-0: names do not resolve as pinned: server -> 10.9.9.9 (want 10.240.0.10)');
  });
});

describe('pin-hosts variants', () => {
  it('without systemd: writes /etc/hostname and runs hostname; without cloud-init: no template, no cloud-init run', async () => {
    const inv = inventoryOf();
    const fakes = fakeCluster(inv, (h) => ({
      hostname: 'localhost',
      tools: [],
      files: { '/etc/hosts': '127.0.0.1 localhost\n', '/etc/os-release': DEBIAN_OS_RELEASE },
    }));
    const { result } = await runEngine([pinHostsStep], inv, fakes);
    expect(result.results.map((r) => r.changes)).toEqual([3, 3, 3]);
    const server = fakes.get('server')!;
    expect(server.uploads.map((u) => u.path)).toEqual(['/etc/hosts', '/etc/hostname']);
    expect(server.changesRun).toEqual(['hostname server']);
    expect(server.text('/etc/hosts')).toBe(`${BLOCK}127.0.0.1 localhost\n`);
    expect(server.text('/etc/hostname')).toBe('server\n');
    expect((await runEngine([pinHostsStep], inv, fakes)).result.changed).toBe(0);
  });

  it('writes the template but does not run cloud-init where manage_etc_hosts is off', async () => {
    const inv = inventoryOf();
    const setup = freshDebian('server');
    (setup.files as Record<string, string>)['/var/lib/cloud/instance/cloud-config.txt'] = '#cloud-config\nmanage_etc_hosts: true\n';
    (setup.files as Record<string, string>)['/etc/cloud/cloud.cfg.d/99-user.cfg'] = 'manage_etc_hosts: false\n';
    // cloud-config.txt is read last (user-data wins), so turn it off there too for this case.
    (setup.files as Record<string, string>)['/var/lib/cloud/instance/cloud-config.txt'] = '#cloud-config\nmanage_etc_hosts: false\n';
    const fakes = new Map([['server', new FakeTransport('server', setup)]]);
    const { result } = await runEngine([pinHostsStep], inv, fakes, { only: ['server'] });
    expect(result.results[0]).toMatchObject({ status: 'changed', changes: 3 });
    expect(fakes.get('server')!.changesRun).toEqual(['hostnamectl set-hostname server']);
    expect(fakes.get('server')!.text(TEMPLATE)).toContain(BLOCK);
  });

  it('replaces a hand-edited block in place of appending, and moves a block found after the address lines', async () => {
    const inv = inventoryOf();
    const edited = BLOCK.replace('10.240.0.21 node-1', '10.240.0.99 node-1');
    const hosts = `127.0.0.1 localhost\n127.0.1.1 node-0.kubernetes.local node-0\n${edited}\n${BLOCK}`;
    const fakes = new Map([['node-0', new FakeTransport('node-0', { tools: ['hostnamectl'], files: { '/etc/hosts': hosts, '/etc/hostname': 'node-0\n' } })]]);
    await runEngine([pinHostsStep], inv, fakes, { only: ['node-0'] });
    expect(fakes.get('node-0')!.text('/etc/hosts')).toBe(`${BLOCK}127.0.0.1 localhost\n127.0.1.1 node-0.kubernetes.local node-0\n\n`);
  });

  it('keeps a 127.0.1.1 line naming the machine, rewrites one naming another cluster machine', async () => {
    const inv = inventoryOf();
    const own = `${BLOCK}127.0.0.1 localhost\n127.0.1.1 node-0.localdomain node-0\n`;
    const cloned = `${BLOCK}127.0.0.1 localhost\n127.0.1.1 node-1.kubernetes.local node-1\n`;
    const run = async (hosts: string) => {
      const fakes = new Map([['node-0', new FakeTransport('node-0', { tools: ['hostnamectl'], files: { '/etc/hosts': hosts, '/etc/hostname': 'node-0\n' } })]]);
      const { result } = await runEngine([pinHostsStep], inv, fakes, { only: ['node-0'] });
      return { changes: result.results[0]!.changes, hosts: fakes.get('node-0')!.text('/etc/hosts') };
    };
    expect(await run(own)).toEqual({ changes: 0, hosts: own });
    expect(await run(cloned)).toEqual({ changes: 1, hosts: `${BLOCK}127.0.0.1 localhost\n127.0.1.1 node-0.kubernetes.local node-0\n` });
  });

  it('--local puts only the block into the jumpbox /etc/hosts, keeping its mode, and checks the names there', async () => {
    const inv = inventoryOf();
    const fakes = fakeCluster(inv, (h) => freshDebian(h));
    const jumpbox = new FakeTransport('jumpbox', { hostname: 'jumpbox', files: { '/etc/hosts': '127.0.0.1 localhost\n127.0.1.1 jumpbox\n' } });
    const { result } = await runEngine([pinHostsStep], inv, fakes, { jumpbox, values: { local: true } });
    expect(result.results.map((r) => `${r.machine}:${r.status}`)).toEqual(['server:changed', 'node-0:changed', 'node-1:changed', 'jumpbox:changed']);
    expect(jumpbox.text('/etc/hosts')).toBe(`${BLOCK}127.0.0.1 localhost\n127.0.1.1 jumpbox\n`);
    expect(jumpbox.hostname).toBe('jumpbox');
    expect(jumpbox.changesRun).toEqual([]);
    expect(jumpbox.commands.filter((c) => c.startsWith('facts: probe getent hosts'))).toHaveLength(6);
    const again = await runEngine([pinHostsStep], inv, fakes, { jumpbox, values: { local: true } });
    expect(again.result.changed).toBe(0);
  });
});
