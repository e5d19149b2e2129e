// pin-hosts end to end on real lab machines (systemd-nspawn, sshd, cloud-init managing /etc/hosts):
// converge, rerun with 0 changes, survive a real reboot, dry-run after a hand edit, --node.
import { execFileSync } from 'node:child_process';
import { chmodSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HOSTS_MARKERS } from '../../src/layout.ts';
import { useLab, type Lab } from './helpers/lab.ts';

const lab = useLab({ name: 'e2e-eng', subnet: '10.240.30.0/24', workers: 2 });
const TEMPLATE = '/etc/cloud/templates/hosts.debian.tmpl';

function block(l: Lab): string {
  return [HOSTS_MARKERS.begin, ...l.machines.map((m) => `${m.ip} ${m.fqdn} ${m.hostname}`), HOSTS_MARKERS.end].join('\n') + '\n';
}

/** `name first-address` for every machine's hostname and FQDN, resolved on `machine`. */
async function resolved(l: Lab, machine: string): Promise<string[]> {
  const names = l.machines.flatMap((m) => [m.hostname, m.fqdn]);
  const out = await l.run(machine, names.map((n) => `printf '%s %s\\n' ${n} "$(getent hosts ${n} | head -n1 | cut -d' ' -f1)"`).join('; '));
  return out.trim().split('\n');
}

function expectedResolution(l: Lab): string[] {
  return l.machines.flatMap((m) => [`${m.hostname} ${m.ip}`, `${m.fqdn} ${m.ip}`]);
}

async function sha(l: Lab, machine: string, ...paths: string[]): Promise<string> {
  return l.run(machine, `sha256sum ${paths.join(' ')}`);
}

async function pinHosts(l: Lab, ...args: string[]) {
  const r = await l.hardway(['pin-hosts', '--json', ...args]);
  if (r.code !== 0) throw new Error(`pin-hosts ${args.join(' ')} failed (exit ${r.code}):\n${r.stderr}\n${r.stdout}`);
  return JSON.parse(r.stdout) as { ok: boolean; changed: number; failed: number; results: Array<{ machine: string; status: string; changes: number }> };
}

describe('hardway pin-hosts on the lab', () => {
  it('pins every name on every machine, fixes a wrong hostname and a stale 127.0.1.1 line, and the names resolve', async () => {
    const l = lab();
    await l.run('node-1', 'hostnamectl set-hostname debian');
    await l.run('server', "sed -i 's/^127.0.1.1 .*/127.0.1.1 debian/' /etc/hosts");
    const first = await pinHosts(l);
    expect(first.ok).toBe(true);
    expect(first.results.map((r) => `${r.machine}:${r.status}`)).toEqual(['server:changed', 'node-0:changed', 'node-1:changed']);
    // /etc/hosts, the template and cloud-init's regeneration of /etc/hosts on each; plus the hostname on node-1.
    expect(first.results.map((r) => r.changes)).toEqual([3, 3, 4]);
    for (const m of l.machines) {
      expect(await resolved(l, m.hostname)).toEqual(expectedResolution(l));
      expect((await l.run(m.hostname, 'hostname')).trim()).toBe(m.hostname);
      expect((await l.run(m.hostname, 'hostname -f')).trim()).toBe(m.fqdn);
      const hosts = await l.run(m.hostname, 'cat /etc/hosts');
      expect(hosts.split(HOSTS_MARKERS.begin)).toHaveLength(2);
      expect(hosts).toContain(block(l));
      // verify() regenerated /etc/hosts with cloud-init: it is the rendered template now.
      expect(hosts).toContain(`${block(l)}127.0.1.1 ${m.fqdn} ${m.hostname}\n`);
      const tmpl = await l.run(m.hostname, `cat ${TEMPLATE}`);
      expect(tmpl.split('\n')[0]).toBe('## template:jinja');
      expect(tmpl).toContain(block(l));
    }
    expect(await l.run('node-1', 'cat /etc/hostname')).toBe('node-1\n');
  });

  it('a second run reports 0 changes', async () => {
    const second = await pinHosts(lab());
    expect(second).toMatchObject({ ok: true, changed: 0, failed: 0 });
    expect(second.results.every((r) => r.status === 'unchanged')).toBe(true);
  });

  it('after a real reboot of node-0 (cloud-init regenerates /etc/hosts) the names still resolve there and nothing needs changing', async () => {
    const l = lab();
    await l.run('node-0', "echo '# added by hand before the reboot' >> /etc/hosts");
    const reboot = await l.hardway(['lab', 'reboot', '--name', l.name, 'node-0']);
    expect(reboot.code, reboot.stderr).toBe(0);
    const hosts = await l.run('node-0', 'cat /etc/hosts');
    expect(hosts).not.toContain('added by hand'); // cloud-init really rewrote the file at boot
    expect(hosts).toContain(block(l));
    expect(await resolved(l, 'node-0')).toEqual(expectedResolution(l));
    expect((await pinHosts(l)).changed).toBe(0);
  });

  it('--dry-run after a hand edit shows the diff and changes nothing', async () => {
    const l = lab();
    await l.run('node-1', "sed -i 's/^10.240.30.20 node-0/10.240.30.99 node-0/' /etc/hosts");
    const before = await sha(l, 'node-1', '/etc/hosts', TEMPLATE);
    const r = await l.hardway(['pin-hosts', '--dry-run']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('node-1: pin-hosts: would change (2 changes)');
    expect(r.stdout).toContain('node-1:   run: cloud-init single --name update_etc_hosts --frequency always');
    expect(r.stdout).toContain('node-1:   put /etc/hosts 0644 root:root (content differs)');
    expect(r.stdout).toMatch(/^node-1: {5}-10\.240\.30\.99 node-0\.kubernetes\.local node-0$/m);
    expect(r.stdout).toMatch(/^node-1: {5}\+10\.240\.30\.20 node-0\.kubernetes\.local node-0$/m);
    expect(r.stdout).toContain('node-0: pin-hosts: unchanged');
    expect(r.stdout).toContain('Summary (dry run: nothing was changed):');
    expect(await sha(l, 'node-1', '/etc/hosts', TEMPLATE)).toBe(before);
    const json = JSON.parse((await l.hardway(['pin-hosts', '--dry-run', '--json'])).stdout);
    // /etc/hosts, then cloud-init's regeneration of it: planned, so the dry run shows it too.
    expect(json.results.map((x: { machine: string; changes: number }) => `${x.machine}:${x.changes}`)).toEqual(['server:0', 'node-0:0', 'node-1:2']);
    expect(await sha(l, 'node-1', '/etc/hosts', TEMPLATE)).toBe(before);
  });

  it('--node node-1 touches only node-1', async () => {
    const l = lab();
    await l.run('node-0', "sed -i 's/^10.240.30.21 node-1/10.240.30.98 node-1/' /etc/hosts");
    const node0 = await sha(l, 'node-0', '/etc/hosts');
    const logsBefore = readdirSync(join(l.dir, 'logs'));
    const r = await pinHosts(l, '--node', 'node-1');
    expect(r.results).toEqual([{ step: 'pin-hosts', machine: 'node-1', status: 'changed', changes: 2 }]);
    expect(await sha(l, 'node-0', '/etc/hosts')).toBe(node0);
    expect(await resolved(l, 'node-1')).toEqual(expectedResolution(l));
    // The run's log shows commands on node-1 only.
    const log = readdirSync(join(l.dir, 'logs')).filter((f) => !logsBefore.includes(f));
    expect(log).toHaveLength(1);
    const text = readFileSync(join(l.dir, 'logs', log[0]!), 'utf8');
    expect(text).toMatch(/node-1: \$ /);
    expect(text).not.toMatch(/ (node-0|server): /);
    // And the whole cluster converges again (node-0: /etc/hosts and cloud-init's regeneration).
    expect((await pinHosts(l)).changed).toBe(2);
    expect((await pinHosts(l)).changed).toBe(0);
  });

  it('--local also pins the names in the jumpbox\'s own /etc/hosts (this host; restored afterwards)', async () => {
    const l = lab();
    const saved = readFileSync('/etc/hosts');
    const mode = statSync('/etc/hosts').mode & 0o7777;
    try {
      const r = await pinHosts(l, '--local', '--node', 'server');
      expect(r.results.map((x) => `${x.machine}:${x.status}`)).toEqual(['server:unchanged', 'jumpbox:changed']);
      const hosts = readFileSync('/etc/hosts', 'utf8');
      expect(hosts.startsWith(block(l))).toBe(true);
      expect(hosts).toContain(saved.toString('utf8').trim());
      expect(statSync('/etc/hosts').mode & 0o7777).toBe(mode);
      expect(execFileSync('getent', ['hosts', 'node-1.kubernetes.local'], { encoding: 'utf8' })).toMatch(/^10\.240\.30\.21\s/);
      expect((await pinHosts(l, '--local', '--node', 'server')).changed).toBe(0);
    } finally {
      writeFileSync('/etc/hosts', saved);
      chmodSync('/etc/hosts', mode);
    }
  });
});
