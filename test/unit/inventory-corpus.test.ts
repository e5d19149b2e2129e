// The bad-input corpus: every malformed machines.txt or cluster.yaml is refused with exit 2, the
// file and line, a message naming the problem, no stack trace, and nothing written.
import { mkdtempSync, writeFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';

const SERVER = '10.240.0.10 server.kubernetes.local server';
const NODE0 = '10.240.0.20 node-0.kubernetes.local node-0 10.200.0.0/24';
const NODE1 = '10.240.0.21 node-1.kubernetes.local node-1 10.200.1.0/24';

interface Case {
  name: string;
  machines: string;
  cluster?: string;
  /** Expected `file:line:` prefix. */
  where: string;
  message: RegExp;
}

const cases: Case[] = [
  { name: 'octet above 255', machines: `${SERVER}\n10.240.0.300 node-0.kubernetes.local node-0 10.200.0.0/24`, where: 'machines.txt:2:', message: /"10\.240\.0\.300" is not a valid IPv4/ },
  { name: 'three octets', machines: `10.240.0 server.kubernetes.local server`, where: 'machines.txt:1:', message: /not a valid IPv4/ },
  { name: 'leading zero octet', machines: `10.240.0.010 server.kubernetes.local server`, where: 'machines.txt:1:', message: /not a valid IPv4/ },
  { name: 'too few fields', machines: `${SERVER}\n10.240.0.20 node-0.kubernetes.local`, where: 'machines.txt:2:', message: /found 2 field/ },
  { name: 'too many fields', machines: `${SERVER} extra more`, where: 'machines.txt:1:', message: /found 5 field/ },
  { name: 'FQDN with one label', machines: `10.240.0.10 server server`, where: 'machines.txt:1:', message: /not a valid fully qualified domain name/ },
  { name: 'FQDN with underscore', machines: `10.240.0.10 ser_ver.kubernetes.local ser_ver`, where: 'machines.txt:1:', message: /"ser_ver.kubernetes.local" contains characters that are not allowed/ },
  { name: 'upper-case hostname', machines: `10.240.0.10 Server.kubernetes.local Server`, where: 'machines.txt:1:', message: /not a valid fully qualified|not a valid hostname/ },
  { name: 'hostname not first label', machines: `${SERVER}\n10.240.0.20 node-0.kubernetes.local node-9 10.200.0.0/24`, where: 'machines.txt:2:', message: /hostname "node-9" is not the first label of FQDN "node-0\.kubernetes\.local"/ },
  { name: 'duplicate IP', machines: `${SERVER}\n10.240.0.10 node-0.kubernetes.local node-0 10.200.0.0/24`, where: 'machines.txt:2:', message: /duplicate IP address "10\.240\.0\.10" \(also on line 1\)/ },
  { name: 'duplicate FQDN', machines: `${SERVER}\n10.240.0.11 server.kubernetes.local server`, where: 'machines.txt:2:', message: /duplicate FQDN/ },
  { name: 'duplicate hostname', machines: `${SERVER}\n10.240.0.11 server.other.local server`, where: 'machines.txt:2:', message: /duplicate hostname "server"/ },
  { name: 'pod subnet with host bits', machines: `${SERVER}\n10.240.0.20 node-0.kubernetes.local node-0 10.200.0.5/24`, where: 'machines.txt:2:', message: /host bits set[\s\S]*did you mean 10\.200\.0\.0\/24/ },
  { name: 'pod subnet not CIDR', machines: `${SERVER}\n10.240.0.20 node-0.kubernetes.local node-0 10.200.0.0`, where: 'machines.txt:2:', message: /not in CIDR form/ },
  { name: 'pod subnet prefix > 32', machines: `${SERVER}\n10.240.0.20 node-0.kubernetes.local node-0 10.200.0.0/33`, where: 'machines.txt:2:', message: /larger than 32/ },
  { name: 'pod subnet outside cluster CIDR', machines: `${SERVER}\n10.240.0.20 node-0.kubernetes.local node-0 10.201.0.0/24`, where: 'machines.txt:2:', message: /outside the cluster CIDR 10\.200\.0\.0\/16/ },
  { name: 'overlapping pod subnets', machines: `${SERVER}\n${NODE0}\n10.240.0.21 node-1.kubernetes.local node-1 10.200.0.0/23`, where: 'machines.txt:3:', message: /overlaps 10\.200\.0\.0\/24 of node-0 \(line 2\)/ },
  { name: 'same pod subnet twice', machines: `${SERVER}\n${NODE0}\n10.240.0.21 node-1.kubernetes.local node-1 10.200.0.0/24`, where: 'machines.txt:3:', message: /overlaps/ },
  { name: 'trailing dot after IP', machines: `10.240.0.10. server.kubernetes.local server`, where: 'machines.txt:1:', message: /"10\.240\.0\.10\." is not a valid IPv4/ },
  { name: 'pod subnet contains a machine IP', machines: `10.200.5.10 server.kubernetes.local server\n10.240.0.20 node-0.kubernetes.local node-0 10.200.5.0/24`, where: 'machines.txt:2:', message: /contains the IP 10\.200\.5\.10 of server/ },
  { name: 'machine IP in service CIDR', machines: `10.32.0.9 server.kubernetes.local server\n${NODE0}`, where: 'machines.txt:1:', message: /inside the service CIDR/ },
  { name: 'no control plane', machines: `${NODE0}\n${NODE1}`, where: 'machines.txt:', message: /no control-plane machine/ },
  { name: 'empty file', machines: `# nothing here\n\n`, where: 'machines.txt:', message: /^error: \S*machines\.txt: no machines: the file has no machine lines \(only blank lines or comments\)\n/ },
  { name: 'shell metacharacter', machines: `${SERVER}\n10.240.0.20 node-0.kubernetes.local node-0;rm 10.200.0.0/24`, where: 'machines.txt:2:', message: /"node-0;rm" contains characters that are not allowed/ },
  { name: 'command substitution', machines: `10.240.0.10 $(reboot).kubernetes.local server`, where: 'machines.txt:1:', message: /contains characters that are not allowed/ },
  { name: 'quote in a name', machines: `10.240.0.10 server.kubernetes.local ser'ver`, where: 'machines.txt:1:', message: /contains characters that are not allowed/ },
  { name: 'pod subnet too small', machines: `${SERVER}\n10.240.0.20 node-0.kubernetes.local node-0 10.200.0.0/31`, where: 'machines.txt:2:', message: /too small/ },
  { name: 'cluster.yaml unknown key', machines: SERVER, cluster: 'clusterCidr: 10.200.0.0/16\npodCidr: 10.1.0.0/16\n', where: 'cluster.yaml:2:', message: /unknown key "podCidr"/ },
  { name: 'cluster.yaml bad CIDR', machines: SERVER, cluster: 'serviceCidr: 10.32.0.1/24\n', where: 'cluster.yaml:1:', message: /serviceCidr: "10\.32\.0\.1\/24" has host bits set[\s\S]*did you mean 10\.32\.0\.0\/24/ },
  { name: 'cluster.yaml port out of range', machines: SERVER, cluster: '\napiPort: 70000\n', where: 'cluster.yaml:2:', message: /apiPort: expected a whole number from 1 to 65535/ },
  { name: 'cluster.yaml port as text', machines: SERVER, cluster: 'apiPort: "6443"\n', where: 'cluster.yaml:1:', message: /apiPort: expected a whole number/ },
  { name: 'cluster.yaml key algorithm', machines: SERVER, cluster: 'keyAlgorithm: dsa\n', where: 'cluster.yaml:1:', message: /expected one of rsa-4096, rsa-2048, ecdsa-p256/ },
  { name: 'cluster.yaml unknown ssh key', machines: SERVER, cluster: 'ssh:\n  user: root\n  password: x\n', where: 'cluster.yaml:3:', message: /unknown key "password" under ssh/ },
  { name: 'cluster.yaml unknown component', machines: SERVER, cluster: 'versions:\n  kubelet: v1.32.3\n', where: 'cluster.yaml:2:', message: /unknown key "kubelet" under versions/ },
  { name: 'cluster.yaml bad version', machines: SERVER, cluster: 'versions:\n  etcd: latest\n', where: 'cluster.yaml:2:', message: /versions\.etcd: expected a version/ },
  { name: 'cluster.yaml bad YAML', machines: SERVER, cluster: 'clusterCidr: [10.200.0.0/16\n', where: 'cluster.yaml:', message: /not valid YAML/ },
  { name: 'cluster.yaml not a mapping', machines: SERVER, cluster: '- a\n- b\n', where: 'cluster.yaml:1:', message: /must be a mapping/ },
  { name: 'cluster.yaml service overlaps cluster', machines: SERVER, cluster: 'serviceCidr: 10.200.7.0/24\n', where: 'cluster.yaml:', message: /overlaps clusterCidr/ },
  { name: 'cluster.yaml node port range', machines: SERVER, cluster: 'nodePortRange: 32767-30000\n', where: 'cluster.yaml:1:', message: /expected a port range/ },
  { name: 'cluster.yaml shell in identity file', machines: SERVER, cluster: 'ssh:\n  identityFile: "~/.ssh/id; rm -rf /"\n', where: 'cluster.yaml:2:', message: /ssh\.identityFile: expected a file path without spaces or shell characters/ },
  // Issue 11, defect 4: every run would reissue, redistribute and restart everything.
  { name: 'cluster.yaml validity equal to the renewal window', machines: SERVER, cluster: 'certValidityDays: 30\n', where: 'cluster.yaml:1:', message: /certValidityDays \(30\) must be greater than renewBeforeDays \(30\)/ },
  { name: 'cluster.yaml renewal window longer than validity', machines: SERVER, cluster: 'certValidityDays: 365\n\nrenewBeforeDays: 400\n', where: 'cluster.yaml:3:', message: /certValidityDays \(365\) must be greater than renewBeforeDays \(400\)/ },
  // Issue 11, defect 5: 10.32.0.1 went into the API server certificate though outside the range.
  { name: 'cluster.yaml service CIDR of one address', machines: SERVER, cluster: 'serviceCidr: 10.32.0.0/32\n', where: 'cluster.yaml:1:', message: /serviceCidr: 10\.32\.0\.0\/32 is too small for Services: it holds 1 address\n  hint: use a \/28 or larger/ },
  { name: 'cluster.yaml service CIDR of two addresses', machines: SERVER, cluster: 'serviceCidr: 10.32.0.0/31\n', where: 'cluster.yaml:1:', message: /serviceCidr: 10\.32\.0\.0\/31 is too small for Services: it holds 2 addresses/ },
  { name: 'cluster.yaml service CIDR /29', machines: SERVER, cluster: '\nserviceCidr: 10.32.0.0/29\n', where: 'cluster.yaml:2:', message: /too small for Services: it holds 8 addresses/ },
  // Issue 11, defect 6: pin-hosts made localhost resolve to a worker on every machine.
  { name: 'hostname localhost', machines: `${SERVER}\n10.240.0.20 localhost.kubernetes.local localhost 10.200.0.0/24`, where: 'machines.txt:2:', message: /"localhost" is a reserved name[\s\S]*hint: pin-hosts would make it mean 10\.240\.0\.20 on every machine/ },
  { name: 'FQDN localhost.localdomain', machines: `10.240.0.10 localhost.localdomain localhost`, where: 'machines.txt:1:', message: /"localhost" is a reserved name/ },
  { name: 'hostname ip6-loopback', machines: `${SERVER}\n10.240.0.20 ip6-loopback.kubernetes.local ip6-loopback 10.200.0.0/24`, where: 'machines.txt:2:', message: /"ip6-loopback" is a reserved name/ },
  { name: 'FQDN under .localhost', machines: `${SERVER}\n10.240.0.20 node-0.localhost node-0 10.200.0.0/24`, where: 'machines.txt:2:', message: /"node-0\.localhost" is a reserved name/ },
  // Issue 11, defect 8: the ssh settings are checked when cluster.yaml is read, not per machine later.
  { name: 'cluster.yaml identity file that does not exist', machines: SERVER, cluster: 'ssh:\n  user: root\n  identityFile: keys/missing\n', where: 'cluster.yaml:3:', message: /identity file \/\S+\/keys\/missing \(ssh\.identityFile\) not found\n  hint: give the private key .*; a relative path is taken from the project directory/ },
  { name: 'cluster.yaml identity file that is a directory', machines: SERVER, cluster: 'ssh:\n  identityFile: .\n', where: 'cluster.yaml:2:', message: /identity file \/\S+ \(ssh\.identityFile\) is a directory, not a file/ },
  { name: 'cluster.yaml ssh config file that does not exist', machines: SERVER, cluster: 'ssh:\n  configFile: ssh_config\n', where: 'cluster.yaml:2:', message: /ssh\.configFile: \/\S+\/ssh_config does not exist/ },
  { name: 'cluster.yaml known_hosts in a missing directory', machines: SERVER, cluster: 'ssh:\n  knownHosts: nowhere/known_hosts\n', where: 'cluster.yaml:2:', message: /ssh\.knownHosts: the directory \/\S+\/nowhere does not exist/ },
  { name: 'cluster.yaml jump host port out of range', machines: SERVER, cluster: 'ssh:\n  jumpHost: a@b:99999\n', where: 'cluster.yaml:2:', message: /ssh\.jumpHost: port 99999 of "a@b:99999" is not a port number\n  hint: use a port from 1 to 65535/ },
  { name: 'cluster.yaml jump host port 0', machines: SERVER, cluster: 'ssh:\n  jumpHost: bastion:0\n', where: 'cluster.yaml:2:', message: /ssh\.jumpHost: port 0 of "bastion:0" is not a port number/ },
  { name: 'cluster.yaml jump host of a bad form', machines: SERVER, cluster: 'ssh:\n  jumpHost: a@b@c\n', where: 'cluster.yaml:2:', message: /ssh\.jumpHost: expected a jump host like user@host:22, got "a@b@c"/ },
  { name: 'cluster.yaml jump host that is an ssh option', machines: SERVER, cluster: 'ssh:\n  jumpHost: -oProxyCommand=x\n', where: 'cluster.yaml:2:', message: /ssh\.jumpHost: expected a jump host/ },
  // Issue 33: a login user reaches sshd, sudoers and shells as is.
  { name: 'cluster.yaml ssh.user with a shell character', machines: SERVER, cluster: 'ssh:\n  user: "debian;reboot"\n', where: 'cluster.yaml:2:', message: /ssh\.user: expected a user name, got "debian;reboot"/ },
  { name: 'cluster.yaml ssh.user with a leading dash', machines: SERVER, cluster: 'ssh:\n  user: -debian\n', where: 'cluster.yaml:2:', message: /ssh\.user: expected a user name/ },
  { name: 'cluster.yaml ssh.user empty', machines: SERVER, cluster: 'ssh:\n  port: 22\n  user: ""\n', where: 'cluster.yaml:3:', message: /ssh\.user: expected a user name, got ""/ },
  { name: 'cluster.yaml ssh.become unknown', machines: SERVER, cluster: 'ssh:\n  user: debian\n  become: su\n', where: 'cluster.yaml:3:', message: /ssh\.become: expected one of sudo, none, got "su"/ },
  { name: 'cluster.yaml ssh.connectTimeout zero', machines: SERVER, cluster: 'ssh:\n  connectTimeout: 0\n', where: 'cluster.yaml:2:', message: /ssh\.connectTimeout: expected a whole number from 1 to 600/ },
  // Issue 11, defect 9: smaller gaps.
  { name: 'machine IP 0.0.0.0', machines: `0.0.0.0 server.kubernetes.local server`, where: 'machines.txt:1:', message: /0\.0\.0\.0 is "this network" .*, not an address another machine can reach/ },
  { name: 'machine IP 255.255.255.255', machines: `${SERVER}\n255.255.255.255 node-0.kubernetes.local node-0 10.200.0.0/24`, where: 'machines.txt:2:', message: /255\.255\.255\.255 is the broadcast address/ },
  { name: 'machine IP 127.0.0.1', machines: `127.0.0.1 server.kubernetes.local server`, where: 'machines.txt:1:', message: /127\.0\.0\.1 is a loopback address/ },
  { name: 'machine IP elsewhere in 127.0.0.0/8', machines: `${SERVER}\n127.1.2.3 node-0.kubernetes.local node-0 10.200.0.0/24`, where: 'machines.txt:2:', message: /127\.1\.2\.3 is a loopback address/ },
  { name: 'machine IP multicast', machines: `224.0.0.5 server.kubernetes.local server`, where: 'machines.txt:1:', message: /224\.0\.0\.5 is a multicast address/ },
  { name: 'machine IP inside the cluster CIDR', machines: `${SERVER}\n${NODE0}\n10.200.99.5 node-1.kubernetes.local node-1 10.200.1.0/24`, where: 'machines.txt:3:', message: /IP 10\.200\.99\.5 of node-1 lies inside the cluster CIDR 10\.200\.0\.0\/16, the pods' network/ },
  { name: 'pod subnet /30', machines: `${SERVER}\n10.240.0.20 node-0.kubernetes.local node-0 10.200.0.0/30`, where: 'machines.txt:2:', message: /pod subnet 10\.200\.0\.0\/30 is too small for the node's pods: it holds 4 addresses\n  hint: use a \/25 or larger .*maxPods/ },
  { name: 'pod subnet /26', machines: `${SERVER}\n10.240.0.20 node-0.kubernetes.local node-0 10.200.0.0/26`, where: 'machines.txt:2:', message: /is too small for the node's pods: it holds 64 addresses/ },
  ...[[2379, 'etcd \\(client port\\)'], [2380, 'etcd \\(peer port\\)'], [10250, "the kubelet's API"], [10257, 'kube-controller-manager'], [10259, 'kube-scheduler'], [22, 'SSH \\(ssh\\.port\\)']].map(([port, who]) => (
    { name: `cluster.yaml apiPort ${port}`, machines: SERVER, cluster: `apiPort: ${port}\n`, where: 'cluster.yaml:1:', message: new RegExp(`apiPort ${port} is already used on the machines by ${who}`) })),
  { name: 'cluster.yaml apiPort equal to ssh.port', machines: SERVER, cluster: 'apiPort: 2222\nssh:\n  port: 2222\n', where: 'cluster.yaml:3:', message: /apiPort 2222 is already used on the machines by SSH \(ssh\.port\)/ },
  { name: 'cluster.yaml node ports covering the API port', machines: SERVER, cluster: 'nodePortRange: 6000-7000\n', where: 'cluster.yaml:1:', message: /nodePortRange 6000-7000 covers port 6443, used by the API server \(apiPort\)/ },
  { name: 'cluster.yaml node ports covering a moved API port', machines: SERVER, cluster: 'nodePortRange: 30000-32767\napiPort: 31000\n', where: 'cluster.yaml:2:', message: /nodePortRange 30000-32767 covers port 31000, used by the API server/ },
  { name: 'cluster.yaml node ports covering SSH', machines: SERVER, cluster: 'nodePortRange: 1-1000\n', where: 'cluster.yaml:1:', message: /nodePortRange 1-1000 covers port 22, used by SSH/ },
  { name: 'cluster.yaml node ports from port 0', machines: SERVER, cluster: 'nodePortRange: 0-1\n', where: 'cluster.yaml:1:', message: /nodePortRange: expected a port range like 30000-32767, got "0-1"/ },
];

describe('a huge field is never echoed whole', () => {
  const huge = 'a'.repeat(100_000);
  for (const [name, machines, cluster] of [
    ['a 100 kB hostname', `10.240.0.10 server.kubernetes.local ${huge}`, undefined],
    ['a 100 kB field with a bad character', `10.240.0.10 server.kubernetes.local server ${huge};`, undefined],
    ['a 100 kB IP address', `${huge} server.kubernetes.local server`, undefined],
    ['a 100 kB pod subnet', `${SERVER}\n10.240.0.20 node-0.kubernetes.local node-0 ${huge}`, undefined],
    ['a 100 kB cluster domain', SERVER, `clusterDomain: ${huge}\n`],
    // YAML itself refuses a plain key longer than 1024 characters (without quoting it).
    ['a 1000-character unknown key', SERVER, `${huge.slice(0, 1000)}: 1\n`],
    ['a 100 kB CIDR', SERVER, `clusterCidr: ${huge}\n`],
  ] as const) {
    it(name, async () => {
      const dir = mkdtempSync(join(tmpdir(), 'hardway-huge-'));
      writeFileSync(join(dir, 'machines.txt'), machines + '\n');
      if (cluster !== undefined) writeFileSync(join(dir, 'cluster.yaml'), cluster);
      const run = await runCli(['inventory', '--machines', join(dir, 'machines.txt')], dir);
      expect(run.code).toBe(2);
      expect(run.stderr.length).toBeLessThan(1000);
      expect(run.stderr).toMatch(/"a{60}\.\.\." \(100\d* characters\)/);
    });
  }
});

describe('bad inputs are refused with file, line, problem and exit 2', () => {
  it('has a corpus of at least 25 cases', () => {
    expect(cases.length).toBeGreaterThanOrEqual(25);
  });

  for (const c of cases) {
    it(c.name, async () => {
      const dir = mkdtempSync(join(tmpdir(), 'hardway-bad-'));
      writeFileSync(join(dir, 'machines.txt'), c.machines + '\n');
      if (c.cluster !== undefined) writeFileSync(join(dir, 'cluster.yaml'), c.cluster);
      const before = readdirSync(dir).sort();
      const run = await runCli(['inventory', '--machines', join(dir, 'machines.txt')], dir);
      expect(run.code).toBe(2);
      expect(run.stdout).toBe('');
      expect(run.stderr).toContain(c.where);
      expect(run.stderr).toMatch(c.message);
      expect(run.stderr).toMatch(/hint: |error: /);
      expect(run.stderr).not.toMatch(/\n\s+at .+:\d+:\d+/); // no stack trace
      expect(readdirSync(dir).sort()).toEqual(before);
    });
  }
});

describe('hardway inventory shows the login user and how commands are raised', () => {
  for (const [cluster, line, become] of [
    [undefined, /^login {11}root over SSH, commands run as root$/m, 'none'],
    ['ssh:\n  user: debian\n', /^login {11}debian over SSH, every command raised with sudo -n \(passwordless sudo required\)$/m, 'sudo'],
    ['ssh:\n  user: admin\n  become: none\n', /^login {11}admin over SSH, commands run as admin \(ssh\.become: none\)$/m, 'none'],
  ] as const) {
    it(cluster ?? 'the default', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'hardway-login-'));
      writeFileSync(join(dir, 'machines.txt'), SERVER + '\n');
      if (cluster !== undefined) writeFileSync(join(dir, 'cluster.yaml'), cluster);
      const run = await runCli(['inventory', '--machines', join(dir, 'machines.txt')], dir);
      expect(run.code).toBe(0);
      expect(run.stdout).toMatch(line);
      const json = await runCli(['inventory', '--machines', join(dir, 'machines.txt'), '--json'], dir);
      expect(JSON.parse(json.stdout).settings.ssh.become).toBe(become);
    });
  }
});
