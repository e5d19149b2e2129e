// What `lab up` writes: the machine files (network, sshd, cloud-init seed) and the lab directory
// (machines.txt, cluster.yaml, known_hosts, ssh_config), checked against hardway's own parsers.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { becomeOf, parseClusterSettings } from '../../src/cluster-settings.ts';
import { InputError } from '../../src/errors.ts';
import { checkLoginUser } from '../../src/lab/login.ts';
import { PACKAGES } from '../../src/lab/rootfs.ts';
import { parseInventory } from '../../src/inventory.ts';
import { cloudConfig, host0Network, labResolver, machineFiles, metaData, sshdConfig, userData } from '../../src/lab/machine-config.ts';
import { PAUSE_IMAGE } from '../../src/images/names.ts';
import { checkDirIsLabs, clusterYaml, knownHosts, machinesTxt, sshConfig } from '../../src/lab/outputs.ts';
import { planLab } from '../../src/lab/plan.ts';

const plan = planLab({ name: 'dev', servers: 1, workers: 2, subnet: '10.240.0.0/24', dir: '/srv/my lab' });
const node0 = plan.machines[1]!;

describe('machine files', () => {
  it('gives host0 a static address with no gateway and no DNS, sorting before Debian\'s 80-container-host0', () => {
    const text = host0Network(node0, 24);
    expect(text).toMatch(/^\[Match\]\nName=host0$/m);
    expect(text).toMatch(/^Address=10\.240\.0\.20\/24$/m);
    expect(text).not.toMatch(/^(Gateway|DNS|DHCP)=/m);
    expect(machineFiles('dev', node0, 24, 'ssh-ed25519 AAAA k').map((f) => f.path)).toContain('etc/systemd/network/10-host0.network');
  });

  it('gives every machine a resolver on its lab subnet that no machine holds (never 127.x, which CoreDNS would forward to itself)', () => {
    const files = machineFiles('dev', node0, 24, 'ssh-ed25519 AAAA k');
    const resolv = files.find((f) => f.path === 'etc/resolv.conf')!;
    expect(resolv.content).toMatch(/^nameserver 10\.240\.0\.2$/m);
    expect(resolv.content).toMatch(/^options timeout:1 attempts:1$/m);
    expect(labResolver({ ip: '10.240.7.33' }, 24)).toBe('10.240.7.2');
    expect(labResolver({ ip: '10.240.7.200' }, 25)).toBe('10.240.7.130');
    const taken = planLab({ name: 'dev', subnet: '10.240.0.0/24', servers: 3, workers: 30, registry: true, dir: '/srv/lab' }).machines.map((m) => m.ip);
    expect(taken).not.toContain(labResolver(node0, 24));
  });

  it('lets root in by key only and serves only the recorded ed25519 host key', () => {
    expect(sshdConfig()).toMatch(/^PermitRootLogin prohibit-password$/m);
    expect(sshdConfig()).toMatch(/^PasswordAuthentication no$/m);
    expect(sshdConfig()).toMatch(/^HostKey \/etc\/ssh\/ssh_host_ed25519_key$/m);
    const auth = machineFiles('dev', node0, 24, 'ssh-ed25519 AAAA k').find((f) => f.path === 'root/.ssh/authorized_keys')!;
    expect(auth.mode).toBe(0o600);
    expect(auth.content).toBe('ssh-ed25519 AAAA k\n');
  });

  it('pins NoCloud as the only datasource and keeps cloud-init away from network and host keys', () => {
    expect(cloudConfig()).toMatch(/^datasource_list: \[ NoCloud, None \]$/m);
    expect(cloudConfig()).toMatch(/^network: \{config: disabled\}$/m);
    expect(cloudConfig()).toMatch(/^ssh_deletekeys: false$/m);
  });

  it('seeds the hostname and lets cloud-init manage /etc/hosts', () => {
    expect(metaData('dev', node0)).toBe('instance-id: hardway-dev-node-0\nlocal-hostname: node-0\n');
    expect(userData(node0)).toBe('#cloud-config\nhostname: node-0\nfqdn: node-0.kubernetes.local\nmanage_etc_hosts: true\n');
  });
});

describe('lab directory files', () => {
  it('writes a machines.txt that hardway\'s inventory parser accepts as is', () => {
    const settings = parseClusterSettings(clusterYaml(undefined, 'dev'), 'cluster.yaml');
    const inv = parseInventory(machinesTxt(plan), settings, { file: 'machines.txt', dir: '/x', clusterFile: 'cluster.yaml' });
    expect(inv.controlPlanes.map((m) => m.hostname)).toEqual(['server']);
    expect(inv.workers.map((m) => [m.hostname, m.podSubnet])).toEqual([['node-0', '10.200.0.0/24'], ['node-1', '10.200.1.0/24']]);
  });

  it('points cluster.yaml at the lab key and known_hosts, keeping the other keys of an existing file', () => {
    const fresh = parseClusterSettings(clusterYaml(undefined, 'dev'), 'cluster.yaml');
    expect(fresh.ssh).toMatchObject({ user: 'root', identityFile: 'id_ed25519', knownHosts: 'known_hosts' });
    const kept = parseClusterSettings(clusterYaml('# mine\nkeyAlgorithm: ecdsa-p256\nssh:\n  user: admin\n  port: 2222\n', 'dev'), 'cluster.yaml');
    expect(kept.keyAlgorithm).toBe('ecdsa-p256');
    expect(kept.ssh).toMatchObject({ user: 'root', port: 2222, identityFile: 'id_ed25519', knownHosts: 'known_hosts' });
  });

  it('sets what real kubelets need on container machines as cluster.yaml keys, keeping a value the user chose', () => {
    const fresh = parseClusterSettings(clusterYaml(undefined, 'dev'), 'cluster.yaml');
    expect(fresh.containerd.restrictOomScoreAdj).toBe(true);
    expect(fresh.kubeProxy.conntrackMaxPerCore).toBe(0);
    expect(fresh.sandboxImage).toBe(PAUSE_IMAGE);
    const mine = parseClusterSettings(clusterYaml('sandboxImage: registry.example/pause:9\n', 'dev'), 'cluster.yaml');
    expect(mine.sandboxImage).toBe('registry.example/pause:9');
  });

  it('pins each host key under IP, hostname and FQDN', () => {
    const keys = Object.fromEntries(plan.machines.map((m, i) => [m.hostname, `ssh-ed25519 KEY${i} root@${m.hostname}`]));
    expect(knownHosts(plan.machines, keys).split('\n')).toEqual([
      '10.240.0.10,server,server.kubernetes.local ssh-ed25519 KEY0',
      '10.240.0.20,node-0,node-0.kubernetes.local ssh-ed25519 KEY1',
      '10.240.0.21,node-1,node-1.kubernetes.local ssh-ed25519 KEY2',
      '',
    ]);
  });

  it('writes an ssh_config with strict host keys and absolute (quoted) paths', () => {
    const text = sshConfig(plan, '/srv/my lab');
    expect(text).toContain('Host node-0 node-0.kubernetes.local 10.240.0.20\n  HostName 10.240.0.20\n  User root\n');
    expect(text).toContain('  IdentityFile "/srv/my lab/id_ed25519"\n');
    expect(text).toContain('  UserKnownHostsFile "/srv/my lab/known_hosts"\n');
    expect(text.match(/StrictHostKeyChecking yes/g)).toHaveLength(3);
    expect(text).not.toMatch(/StrictHostKeyChecking (no|accept-new)/);
  });
});

describe('lab directory ownership', () => {
  it('refuses to overwrite a machines.txt the lab did not write, and accepts its own', () => {
    const dir = mkdtempSync(join(tmpdir(), 'hw-labdir-'));
    expect(() => checkDirIsLabs(dir)).not.toThrow();
    writeFileSync(join(dir, 'machines.txt'), machinesTxt(plan));
    expect(() => checkDirIsLabs(dir)).not.toThrow();
    writeFileSync(join(dir, 'machines.txt'), '10.0.0.5 server.example.com server\n');
    expect(() => checkDirIsLabs(dir)).toThrow(/machines\.txt exists and was not written by hardway lab/);
  });
});

describe('lab up --login-user: machines as cloud images come', () => {
  const spec = { name: 'dev', servers: 1, workers: 2, subnet: '10.240.0.0/24', dir: '/srv/lab', loginUser: 'debian' };
  const sudoPlan = planLab(spec);
  const key = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIE hardway-lab-dev';

  it('refuses root over SSH, gives the lab key to the user (not to root) and makes the user with passwordless sudo through cloud-init', () => {
    const files = machineFiles('dev', node0, 24, key, undefined, 'debian');
    expect(files.find((f) => f.path.endsWith('10-hardway.conf'))!.content).toMatch(/^PermitRootLogin no$/m);
    expect(files.map((f) => f.path)).not.toContain('root/.ssh/authorized_keys');
    const seed = files.find((f) => f.path.endsWith('nocloud/user-data'))!.content;
    expect(seed).toMatch(/^users:\n {2}- name: debian\n/m);
    expect(seed).toContain("sudo: 'ALL=(ALL) NOPASSWD:ALL'");
    expect(seed).toContain('lock_passwd: true');
    expect(seed).toContain(`- ${JSON.stringify(key)}`);
    // Without a login user: root by key, as before.
    expect(sshdConfig()).toMatch(/^PermitRootLogin prohibit-password$/m);
    expect(machineFiles('dev', node0, 24, key).map((f) => f.path)).toContain('root/.ssh/authorized_keys');
  });

  it('writes a project that logs in as the user: cluster.yaml ssh.user (raised with sudo) and ssh_config User', () => {
    const settings = parseClusterSettings(clusterYaml(undefined, 'dev', { loginUser: 'debian' }), 'cluster.yaml');
    expect(settings.ssh.user).toBe('debian');
    expect(becomeOf(settings.ssh)).toBe('sudo');
    expect(sshConfig(sudoPlan, '/srv/lab')).toMatch(/^ {2}User debian$/m);
    expect(sshConfig(plan, '/srv/lab')).toMatch(/^ {2}User root$/m);
  });

  it('has sudo in the root filesystem (a new package list: a new cached root)', () => {
    expect(PACKAGES).toContain('sudo');
  });

  it('takes a login name and refuses one with shell characters or a leading dash (exit 2); root is the default login', () => {
    expect(checkLoginUser('debian')).toBe('debian');
    expect(checkLoginUser('root')).toBeUndefined();
    for (const bad of ['-oProxyCommand=x', 'deb;ian', '', 'Debian']) expect(() => checkLoginUser(bad)).toThrow(InputError);
  });
});
