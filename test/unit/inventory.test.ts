// machines.txt parsing: what is accepted and what is derived from it.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseInventory, selectMachines } from '../../src/inventory.ts';
import { becomeOf, defaultSettings, parseClusterSettings } from '../../src/cluster-settings.ts';
import { InputError } from '../../src/errors.ts';

const paths = { file: '/p/machines.txt', dir: '/p', clusterFile: '/p/cluster.yaml' };
const parse = (text: string, settings = defaultSettings()) => parseInventory(text, settings, paths);

describe('inventory', () => {
  it('accepts tabs, runs of blanks, comments and blank lines', () => {
    const inv = parse(
      '# cluster\n\n10.240.0.10\t server.kubernetes.local   server   # the control plane\n' +
        '   10.240.0.20 node-0.kubernetes.local\tnode-0\t\t10.200.0.0/24\n\r\n',
    );
    expect(inv.machines.map((m) => [m.hostname, m.role, m.line])).toEqual([
      ['server', 'control-plane', 3],
      ['node-0', 'worker', 4],
    ]);
    expect(inv.workers[0]!.podSubnet).toBe('10.200.0.0/24');
  });

  it('derives the service IP and API server URL from the settings and first control plane', () => {
    const settings = parseClusterSettings('serviceCidr: 10.96.0.0/12\napiPort: 8443\nevenControlPlanes: true\n', 'cluster.yaml');
    const inv = parse('10.240.0.10 server.kubernetes.local server\n10.240.0.11 server-2.kubernetes.local server-2\n', settings);
    expect(inv.serviceIp).toBe('10.96.0.1');
    expect(inv.apiServerUrl).toBe('https://server.kubernetes.local:8443');
    expect(inv.controlPlanes).toHaveLength(2);
  });

  it('takes a service CIDR down to /28 (14 Service IPs), the first of them the kubernetes Service', () => {
    const inv = parse('10.240.0.10 server.kubernetes.local server\n', parseClusterSettings('serviceCidr: 10.32.0.16/28\n', 'cluster.yaml'));
    expect(inv.serviceIp).toBe('10.32.0.17');
  });

  it('takes ssh files that exist, relative to the project directory or under ~/', () => {
    const dir = mkdtempSync(join(tmpdir(), 'hw-ssh-'));
    // A real private key: ssh.identityFile is checked as -i is (a file that holds a private key).
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'test', '-f', join(dir, 'id_test')]);
    writeFileSync(join(dir, 'ssh_config'), '');
    const s = parseClusterSettings('ssh:\n  identityFile: id_test\n  configFile: ./ssh_config\n  knownHosts: ~/known_hosts\n  jumpHost: admin@10.0.0.1:2222\n', 'cluster.yaml', { dir });
    expect(s.ssh).toMatchObject({ identityFile: 'id_test', configFile: './ssh_config', knownHosts: '~/known_hosts', jumpHost: 'admin@10.0.0.1:2222' });
  });

  it('raises a login other than root with sudo unless ssh.become says none; root with become: sudo needs nothing', () => {
    const become = (yaml: string) => becomeOf(parseClusterSettings(yaml, 'cluster.yaml').ssh);
    expect(become('')).toBe('none');
    expect(become('ssh:\n  user: debian\n')).toBe('sudo');
    expect(become('ssh:\n  user: debian\n  become: none\n')).toBe('none');
    expect(become('ssh:\n  user: root\n  become: sudo\n')).toBe('none');
    expect(parseClusterSettings('ssh:\n  user: ec2-user\n  connectTimeout: 3\n', 'cluster.yaml').ssh).toMatchObject({ user: 'ec2-user', connectTimeout: 3 });
  });

  it('takes a /25 pod subnet (room for the kubelet\'s 110 pods) and a node port range clear of every port in use', () => {
    const settings = parseClusterSettings('nodePortRange: 40000-40100\napiPort: 443\n', 'cluster.yaml');
    const inv = parse('10.240.0.10 server.kubernetes.local server\n10.240.0.20 node-0.kubernetes.local node-0 10.200.0.128/25\n', settings);
    expect(inv.workers[0]!.podSubnet).toBe('10.200.0.128/25');
  });

  it('matches machine names exactly: node-1 never selects node-10', () => {
    const inv = parse(
      '10.240.0.10 server.kubernetes.local server\n' +
        '10.240.0.21 node-1.kubernetes.local node-1 10.200.1.0/24\n' +
        '10.240.0.30 node-10.kubernetes.local node-10 10.200.10.0/24\n',
    );
    expect(selectMachines(inv, ['node-1']).map((m) => m.hostname)).toEqual(['node-1']);
    expect(selectMachines(inv, ['node-10']).map((m) => m.hostname)).toEqual(['node-10']);
    expect(selectMachines(inv, undefined)).toHaveLength(3);
  });

  it('refuses an unknown --node name as an input error listing the known ones', () => {
    const inv = parse('10.240.0.10 server.kubernetes.local server\n');
    expect(() => selectMachines(inv, ['node'])).toThrow(InputError);
    expect(() => selectMachines(inv, ['node'])).toThrow(/no machine named "node"/);
  });

  it('fills every cluster.yaml default from KTHW', () => {
    const s = parseClusterSettings('', 'cluster.yaml');
    expect(s).toMatchObject({
      clusterCidr: '10.200.0.0/16',
      serviceCidr: '10.32.0.0/24',
      clusterDomain: 'cluster.local',
      apiPort: 6443,
      nodePortRange: '30000-32767',
      keyAlgorithm: 'rsa-4096',
      certValidityDays: 3653,
      ssh: { user: 'root', port: 22, knownHosts: 'known_hosts' },
    });
  });

  it('takes every documented cluster.yaml key', () => {
    const s = parseClusterSettings(
      [
        'clusterCidr: 10.100.0.0/16',
        'serviceCidr: 10.96.0.0/24',
        'clusterDomain: example.internal',
        'apiPort: 443',
        'nodePortRange: 31000-31999',
        'keyAlgorithm: ecdsa-p256',
        'certValidityDays: 365',
        'renewBeforeDays: 10',
        'versions:',
        '  etcd: v3.5.21',
        'ssh:',
        '  user: debian',
        '  port: 2222',
        '  identityFile: ~/.ssh/id_ed25519',
        '  knownHosts: ./known_hosts',
        '  jumpHost: admin@bastion.example.com:22',
        '  configFile: ./ssh_config',
      ].join('\n'),
      'cluster.yaml',
    );
    expect(s.keyAlgorithm).toBe('ecdsa-p256');
    expect(s.ssh).toEqual({
      user: 'debian',
      port: 2222,
      identityFile: '~/.ssh/id_ed25519',
      knownHosts: './known_hosts',
      jumpHost: 'admin@bastion.example.com:22',
      configFile: './ssh_config',
    });
    expect(s.versions.etcd).toBe('v3.5.21');
    expect(s.versions.kubernetes).toBe('v1.32.3');
  });
});
