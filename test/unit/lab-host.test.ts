// Host-side helpers of the lab: mountinfo parsing, subnet conflicts with host routes, the mirror
// apt uses, the cache key, and the precondition messages.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InputError } from '../../src/errors.ts';
import { mountsUnder, parseMountPoints } from '../../src/lab/mounts.ts';
import { checkSubnetFree } from '../../src/lab/network.ts';
import { checkLabHost } from '../../src/lab/preconditions.ts';
import { hostMirror } from '../../src/download/apt.ts';
import { PACKAGES, rootfsPath } from '../../src/lab/rootfs.ts';
import { parseCidr, type Network } from '../../src/net/ipv4.ts';
import { nspawnArgs } from '../../src/lab/boot.ts';
import { planLab } from '../../src/lab/plan.ts';

const net = (t: string) => (parseCidr(t) as { ok: true; net: Network }).net;

describe('mounts', () => {
  const info = [
    '22 1 0:21 / / rw - ext4 /dev/vda rw',
    '90 22 0:50 / /var/lib/hardway/labs/dev/machines/node-0/root rw - overlay overlay rw',
    '91 22 0:51 / /var/lib/hardway/labs/dev/machines/node-0/root/proc rw - proc proc rw',
    '92 22 0:52 / /var/lib/hardway/labs/dev2/x rw - tmpfs tmpfs rw',
    '93 22 0:53 / /tmp/with\\040space rw - tmpfs tmpfs rw',
  ].join('\n');

  it('decodes mount points and lists those under a directory deepest first, not its siblings', () => {
    expect(parseMountPoints(info)).toContain('/tmp/with space');
    expect(mountsUnder('/var/lib/hardway/labs/dev', info)).toEqual([
      '/var/lib/hardway/labs/dev/machines/node-0/root/proc',
      '/var/lib/hardway/labs/dev/machines/node-0/root',
    ]);
  });
});

describe('subnet conflicts', () => {
  const routes = [
    { dst: 'default', dev: 'eth0' },
    { dst: '192.0.2.0/24', dev: 'eth0' },
    { dst: '10.240.20.0/24', dev: 'hw-transport' },
    { dst: '10.240.40.0/24', dev: 'hw-dev' },
  ];

  it('accepts a free subnet and the lab\'s own bridge route', () => {
    expect(() => checkSubnetFree(net('10.240.10.0/24'), 'hw-e2e', routes)).not.toThrow();
    expect(() => checkSubnetFree(net('10.240.40.0/24'), 'hw-dev', routes)).not.toThrow();
  });

  it('refuses a subnet another lab or the host network already uses', () => {
    expect(() => checkSubnetFree(net('10.240.20.0/24'), 'hw-e2e', routes)).toThrow(/overlaps 10\.240\.20\.0\/24, which this host already reaches through hw-transport/);
    expect(() => checkSubnetFree(net('192.0.0.0/16'), 'hw-e2e', routes)).toThrow(InputError);
  });
});

describe('root filesystem cache', () => {
  it('keys the cache by packages, suite and recipe', () => {
    expect(rootfsPath('/c')).toMatch(/^\/c\/rootfs-[0-9a-f]{16}$/);
    expect(rootfsPath('/c')).toBe(rootfsPath('/c'));
    expect(PACKAGES).toEqual(expect.arrayContaining(['openssh-server', 'cloud-init', 'socat', 'conntrack', 'ipset', 'kmod', 'iptables']));
  });

  it('uses the mirror apt is configured with (deb822 and one-line sources), else deb.debian.org', () => {
    const dir = mkdtempSync(join(tmpdir(), 'hw-mirror-'));
    const deb822 = join(dir, 'debian.sources');
    writeFileSync(deb822, 'Types: deb\nURIs: http://mirror.example/debian\nSuites: bookworm bookworm-updates\n\nTypes: deb\nURIs: http://security.example/debian-security\nSuites: bookworm-security\n');
    expect(hostMirror([deb822])).toBe('http://mirror.example/debian');
    const oneLine = join(dir, 'sources.list');
    writeFileSync(oneLine, 'deb [arch=amd64] http://other.example/debian bookworm main\n');
    expect(hostMirror([join(dir, 'missing'), oneLine])).toBe('http://other.example/debian');
    expect(hostMirror([join(dir, 'missing')])).toBe('http://deb.debian.org/debian');
  });
});

describe('preconditions and nspawn', () => {
  it('refuses to run without root, as an input error with what to do', async () => {
    await expect(checkLabHost(1000)).rejects.toMatchObject({ exitCode: 2, message: expect.stringContaining('needs root') });
  });

  it('boots without host registration, on the lab bridge, with the short hostname', () => {
    const m = planLab({ name: 'dev', servers: 1, workers: 1, subnet: '10.240.0.0/24', dir: '/x' }).machines[1]!;
    const args = nspawnArgs('/r', m, 'hw-dev', '/m/containerd');
    expect(args).toEqual(expect.arrayContaining(['-D', '/r', '-b', '-M', 'dev-node-0', '--hostname=node-0', '--register=no',
      '--keep-unit', '--network-bridge=hw-dev', '--capability=all', '--console=pipe', '--resolv-conf=off']));
  });

  it('lets runc make session keyrings and keeps containerd off the overlay root (what a real kubelet needs)', () => {
    const m = planLab({ name: 'dev', servers: 1, workers: 1, subnet: '10.240.0.0/24', dir: '/x' }).machines[1]!;
    const args = nspawnArgs('/r', m, 'hw-dev', '/m/containerd');
    expect(args).toContain('--system-call-filter=add_key keyctl request_key');
    expect(args).toContain('--bind=/m/containerd:/var/lib/containerd');
  });
});
