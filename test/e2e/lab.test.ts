// The lab, end to end on this host: real systemd-nspawn machines with systemd, sshd and
// cloud-init, reached with the system ssh client and strict host-key checking. Needs root and
// systemd-nspawn/debootstrap: without them the suite FAILS (beforeAll), it never skips.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { downLab, hardway, HARDWAY, startLab, type Lab, type RunResult } from './helpers/lab.ts';

const NAME = 'e2e-lab';
const SUBNET = '10.240.10.0/24';
const STATE = `/var/lib/hardway/labs/${NAME}`;
let lab: Lab;

/** ssh with only the lab's known_hosts and key, no ssh_config: strict checking is ssh's own. */
function strictSsh(ip: string, knownHosts: string, command: string): RunResult {
  try {
    const stdout = execFileSync('ssh', ['-F', '/dev/null', '-o', 'BatchMode=yes', '-o', 'StrictHostKeyChecking=yes',
      '-o', `UserKnownHostsFile=${knownHosts}`, '-o', 'GlobalKnownHostsFile=/dev/null', '-o', 'IdentitiesOnly=yes',
      '-i', lab.identityFile, `root@${ip}`, command], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    return { code: 0, stdout, stderr: '' };
  } catch (e) {
    const err = e as { status: number; stdout: string; stderr: string };
    return { code: err.status, stdout: err.stdout, stderr: err.stderr };
  }
}

/** Pids of a lab's systemd-nspawn processes ('' when none). */
function nspawnPids(lab = NAME): string {
  try {
    return execFileSync('pgrep', ['-f', '--', `systemd-nspawn .*-M ${lab}-`], { encoding: 'utf8' }).trim();
  } catch {
    return ''; // pgrep exits 1 when nothing matches
  }
}

/** The kubelet's host-wide settings, as this host has them. */
const KUBELET_SYSCTLS = ['vm/overcommit_memory', 'vm/panic_on_oom', 'kernel/panic', 'kernel/panic_on_oops', 'kernel/keys/root_maxkeys', 'kernel/keys/root_maxbytes'];
const sysctls = () => KUBELET_SYSCTLS.map((k) => `${k}=${readFileSync(`/proc/sys/${k}`, 'utf8').trim()}`);
/** Labs on this host besides ours (another suite's, a developer's): then the settings stay held. */
const otherLabs = () => (existsSync('/var/lib/hardway/labs') ? execFileSync('ls', ['/var/lib/hardway/labs'], { encoding: 'utf8' }).split('\n').filter((n) => n && n !== NAME) : []);
let hostBefore: string[] = [];
let aloneAtStart = false;

beforeAll(async () => {
  if (process.getuid?.() !== 0) throw new Error('the lab e2e suite needs root (it runs systemd-nspawn); run npm test as root');
  aloneAtStart = otherLabs().length === 0;
  hostBefore = sysctls();
  lab = await startLab({ name: NAME, subnet: SUBNET, servers: 1, workers: 2 });
});

afterAll(async () => {
  await downLab(NAME); // also when a test (or beforeAll) failed
});

describe('hardway lab', () => {
  it('writes machines.txt, cluster.yaml, a 0600 key, known_hosts and ssh_config that hardway reads with no flags', async () => {
    expect(lab.machines.map((m) => `${m.hostname} ${m.ip} ${m.podSubnet ?? '-'}`)).toEqual([
      'server 10.240.10.10 -', 'node-0 10.240.10.20 10.200.0.0/24', 'node-1 10.240.10.21 10.200.1.0/24']);
    expect(statSync(lab.identityFile).mode & 0o777).toBe(0o600);
    expect(readFileSync(join(lab.dir, 'cluster.yaml'), 'utf8')).toMatch(/knownHosts: known_hosts/);
    const inv = await lab.hardway(['inventory']);
    expect(inv.stderr).toBe('');
    expect(inv.code).toBe(0);
  });

  it('lets the system ssh in to every machine with strict host-key checking, and each has its own name and host key', () => {
    const keys = readFileSync(lab.knownHosts, 'utf8').trim().split('\n').map((l) => l.split(' ')[2]);
    expect(new Set(keys).size).toBe(lab.machines.length);
    const ids = new Set<string>();
    for (const m of lab.machines) {
      const r = strictSsh(m.ip, lab.knownHosts, 'hostname; hostname -f; cat /etc/machine-id; ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub');
      expect(r.stderr).toBe('');
      const [host, fqdn, machineId] = r.stdout.split('\n');
      expect([host, fqdn]).toEqual([m.hostname, m.fqdn]);
      ids.add(machineId!);
    }
    expect(ids.size).toBe(lab.machines.length);
    const viaConfig = execFileSync('ssh', ['-F', lab.sshConfig, 'node-1', 'hostname'], { encoding: 'utf8' });
    expect(viaConfig.trim()).toBe('node-1');
  });

  it('refuses a machine whose host key is not the recorded one', () => {
    const [server] = readFileSync(lab.knownHosts, 'utf8').trim().split('\n');
    const swapped = join(lab.dir, 'known_hosts.swapped');
    // node-0's address paired with server's key: ssh must refuse to connect.
    writeFileSync(swapped, `${lab.machines[1]!.ip} ${server!.split(' ').slice(1).join(' ')}\n`);
    const r = strictSsh(lab.machines[1]!.ip, swapped, 'true');
    expect(r.code).toBe(255);
    expect(r.stderr).toMatch(/REMOTE HOST IDENTIFICATION HAS CHANGED|Host key verification failed/);
  });

  it('gives the machines no route out: only the lab subnet, a resolver on it that nothing answers at, NoCloud as datasource', async () => {
    const out = await lab.run('node-0', 'ip -4 route; echo ---; grep -v "^#" /etc/resolv.conf; echo ---; cloud-init query v1.platform; echo ---; s=$(date +%s); getent hosts example.org; echo "exit $? after $(( $(date +%s) - s )) s"');
    const [routes, resolv, platform, lookup] = out.split('---\n');
    expect(routes!.trim()).toBe('10.240.10.0/24 dev host0 proto kernel scope link src 10.240.10.20');
    expect(resolv!.trim()).toBe('nameserver 10.240.10.2\noptions timeout:1 attempts:1');
    expect(lab.machines.map((m) => m.ip)).not.toContain('10.240.10.2');
    expect(platform!.trim()).toBe('nocloud');
    // A name outside the cluster fails within seconds: nobody answers, nothing leaves the lab.
    expect(lookup!.trim()).toMatch(/^exit 2 after [0-4] s$/);
  });

  it('reaches one machine from another over the lab bridge', async () => {
    const out = await lab.run('node-0', `timeout 5 bash -c 'exec 3<>/dev/tcp/${lab.machines[0]!.ip}/22 && head -c 7 <&3'`);
    expect(out).toBe('SSH-2.0');
  });

  it('runs each machine in cgroups of its own: the same unit started on every machine at once never fails (219/CGROUP)', async () => {
    // With one shared cgroup tree, a unit stopping on one machine removed the cgroup that the same
    // unit starting on another machine was entering: status 219/CGROUP, now and then.
    const cycle = 'for i in $(seq 15); do systemd-run --wait --quiet --unit=hw-cgroup-probe true || exit 1; done';
    const runs = await Promise.all(lab.machines.map((m) => lab.ssh(m.hostname, cycle)));
    expect(runs.map((r) => r.code)).toEqual(lab.machines.map(() => 0));
    const cgroup = readFileSync(`/proc/${nspawnPids().split('\n')[0]}/cgroup`, 'utf8');
    expect(cgroup).toMatch(new RegExp(`:/hardway-lab/${NAME}-[a-z0-9-]+/supervisor$`, 'm'));
  });

  it('up on the running lab is a no-op that reports it', async () => {
    const before = nspawnPids();
    const r = await hardway(['lab', 'up', '--name', NAME, '--subnet', SUBNET, '--dir', lab.dir]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/already running, nothing to do/);
    expect(nspawnPids()).toBe(before);
  });

  it('refuses a second lab on the same subnet as an input error, creating nothing', async () => {
    const r = await hardway(['lab', 'up', '--name', 'e2e-clash', '--subnet', SUBNET, '--dir', join(lab.dir, 'clash')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/overlaps 10\.240\.10\.0\/24/);
    expect(r.stderr).not.toMatch(/at .*\.ts:\d+/);
    expect(execFileSync('ip', ['-br', 'link'], { encoding: 'utf8' })).not.toMatch(/hw-e2e-clash/);
  });

  it('a real reboot: cloud-init rewrites /etc/hosts and drops a line appended by hand', async () => {
    await lab.run('node-0', "echo '10.9.9.9 hand-added' >> /etc/hosts");
    const bootBefore = await lab.run('node-0', 'cat /proc/sys/kernel/random/boot_id');
    const r = await hardway(['lab', 'reboot', '--name', NAME, 'node-0']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const after = await lab.run('node-0', 'cat /proc/sys/kernel/random/boot_id; cat /etc/hosts');
    expect(after.split('\n')[0]).not.toBe(bootBefore.trim());
    expect(after).not.toMatch(/hand-added/);
    expect(after).toMatch(/^127\.0\.1\.1 node-0\.kubernetes\.local node-0$/m);
  });

  it('stop takes a machine down and start brings it back; status shows both', async () => {
    expect((await hardway(['lab', 'stop', '--name', NAME, 'node-1'])).code).toBe(0);
    const down = JSON.parse((await hardway(['lab', 'status', '--name', NAME, '--json'])).stdout).labs[0];
    expect(down.machines.map((m: { hostname: string; running: boolean; ssh: boolean }) => [m.hostname, m.running, m.ssh]))
      .toEqual([['server', true, true], ['node-0', true, true], ['node-1', false, false]]);
    expect((await lab.ssh('node-1', 'true')).code).toBe(255);
    const start = await hardway(['lab', 'start', '--name', NAME, 'node-1']);
    expect(start.code).toBe(0);
    expect((await lab.run('node-1', 'hostname')).trim()).toBe('node-1');
    const table = await hardway(['lab', 'status', '--name', NAME]);
    expect(table.stdout).toMatch(/^node-1\s+10\.240\.10\.21\s+worker\s+yes \(pid \d+\)\s+yes$/m);
  });

  it('names unknown machines as an input error', async () => {
    const r = await hardway(['lab', 'stop', '--name', NAME, 'node-7']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/no machine named "node-7".*\n.*its machines: server, node-0, node-1/);
  });

  it('gives every machine what a real kubelet needs: /dev/kmsg, writable cgroup controllers, /var/lib/containerd off the overlay root, the kubelet\'s host settings', async () => {
    for (const m of lab.machines) {
      const out = await lab.run(m.hostname, [
        'stat -c %t:%T /dev/kmsg',
        'systemctl is-active hardway-lab-kubelet-host',
        'mkdir /sys/fs/cgroup/cpu/e2e-probe && rmdir /sys/fs/cgroup/cpu/e2e-probe && echo cgroup-writable',
        'findmnt -n -o FSTYPE /var/lib/containerd',
      ].join('; '));
      expect(out.trim().split('\n'), m.hostname).toEqual(['1:b', 'active', 'cgroup-writable', 'ext4']);
    }
    // Host-wide: what the kubelet would write, set by the lab (the machines cannot).
    expect(sysctls()).toEqual(['vm/overcommit_memory=1', 'vm/panic_on_oom=0', 'kernel/panic=10', 'kernel/panic_on_oops=1',
      'kernel/keys/root_maxkeys=1000000', 'kernel/keys/root_maxbytes=25000000']);
  });

  it('down leaves no process, mount or bridge behind, and is idempotent', async () => {
    const r = await hardway(['lab', 'down', '--name', NAME, '--yes']);
    expect(r.code).toBe(0);
    // The last lab on the host puts the host settings back (with another lab up they stay held).
    if (aloneAtStart && otherLabs().length === 0) expect(sysctls()).toEqual(hostBefore);
    expect(nspawnPids()).toBe('');
    expect(readFileSync('/proc/self/mountinfo', 'utf8')).not.toContain(STATE);
    expect(execFileSync('ip', ['-br', 'link'], { encoding: 'utf8' })).not.toMatch(/hw-e2e-lab|vb-e2e-lab/);
    for (const h of ['/sys/fs/cgroup/unified', '/sys/fs/cgroup/systemd', '/sys/fs/cgroup']) {
      expect(existsSync(`${h}/hardway-lab/${NAME}-server`)).toBe(false);
    }
    const again = await hardway(['lab', 'down', '--name', NAME, '--yes']);
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/nothing to do/);
  });
});

describe('hardway lab down after a crashed up', () => {
  const CRASH = 'e2e-crash';
  const dir = mkdtempSync(join(tmpdir(), 'hardway-e2e-crash-'));
  afterAll(async () => {
    await downLab(CRASH);
    rmSync(dir, { recursive: true, force: true });
  });

  it('removes every machine, mount and the bridge that an up killed half-way left behind', async () => {
    const up = spawn(process.execPath, [HARDWAY, 'lab', 'up', '--name', CRASH, '--subnet', '10.240.11.0/24', '--workers', '1', '--dir', dir],
      { stdio: 'ignore', env: { ...process.env, CI: 'true' } });
    const pidFile = `/var/lib/hardway/labs/${CRASH}/machines/node-0/pid`;
    for (let i = 0; i < 6000 && !existsSync(pidFile); i++) await new Promise((r) => setTimeout(r, 50));
    up.kill('SIGKILL'); // the CLI dies while the machines boot
    await new Promise((r) => up.once('exit', r));
    expect(existsSync(pidFile)).toBe(true);
    expect(nspawnPids(CRASH)).not.toBe('');
    expect(readFileSync('/proc/self/mountinfo', 'utf8')).toContain(`/var/lib/hardway/labs/${CRASH}/`);

    const r = await hardway(['lab', 'down', '--name', CRASH, '--yes']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(nspawnPids(CRASH)).toBe('');
    expect(readFileSync('/proc/self/mountinfo', 'utf8')).not.toContain(`/var/lib/hardway/labs/${CRASH}`);
    expect(execFileSync('ip', ['-br', 'link'], { encoding: 'utf8' })).not.toMatch(/hw-e2e-crash|vb-e2e-crash/);
    expect(existsSync(`/var/lib/hardway/labs/${CRASH}`)).toBe(false);
  });
});
