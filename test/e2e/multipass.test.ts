// hardway multipass end to end, with the TEST STAND-IN of the multipass command first on PATH
// (test/fixtures/multipass): every VM is a machine of lab "e2e-mp" on 10.240.70.0/24, booted with
// the NoCloud seed Multipass would give it, so cloud-init applies hardway's user-data for real
// (host key, root's key, manage_etc_hosts, the marker). Checked: the files `multipass up` writes
// let strict SSH in with no trust on first use; a rerun changes nothing and relaunches only a VM
// deleted by hand; hardway's steps run on the VMs; names still resolve after `multipass restart`;
// a changed address is named and rewritten; `multipass down` deletes only hardway's VMs.
// The Kubernetes server binaries are built from source by `hardway download --source debian`
// (minutes on a fresh machine, once, then cached), so the full `hardway up` test always runs.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseDocument } from 'yaml';
import { hostArch } from '../../src/download/arch.ts';
import { cacheDir } from '../../src/download/cache.ts';
import { downloadFromDebian } from '../../src/download/debian.ts';
import { PAUSE_IMAGE } from '../../src/images/names.ts';
import { HOSTS_MARKERS } from '../../src/layout.ts';
import { parseInfo, parseList } from '../../src/multipass/json.ts';
import { downLab, hardway, REPO, type RunResult } from './helpers/lab.ts';

const LAB = 'e2e-mp';
const SUBNET = '10.240.70.0/24';
const PREFIX = 'e2emp';
const STAND_IN = join(REPO, 'test/fixtures/multipass');
const VMS = ['server', 'node-0', 'node-1'];
const IPS = { server: '10.240.70.10', 'node-0': '10.240.70.11', 'node-1': '10.240.70.12' } as Record<string, string>;

let dir = '';
let stateDir = '';
let env: NodeJS.ProcessEnv = {};

function run(file: string, args: string[], opts: { input?: string } = {}): Promise<RunResult> {
  return new Promise((done) => {
    const child = execFile(file, args, { cwd: dir, env: { ...process.env, CI: 'true', ...env }, maxBuffer: 64 << 20 }, (err, stdout, stderr) => {
      done({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout: String(stdout), stderr: String(stderr) });
    });
    child.stdin?.end(opts.input ?? '');
  });
}

/** The stand-in, as hardway finds it on PATH. */
const multipass = (...args: string[]) => run(join(STAND_IN, 'multipass'), args);
/** hardway in DIR with the stand-in on PATH. */
const hw = (...args: string[]) => hardway(args, { cwd: dir, env });
/** ssh with DIR's ssh_config (strict host keys against DIR/known_hosts). */
async function ssh(host: string, command: string): Promise<string> {
  const r = await run('ssh', ['-F', join(dir, 'ssh_config'), '-o', 'BatchMode=yes', host, command]);
  if (r.code !== 0) throw new Error(`${host}: ${command} failed (exit ${r.code}):\n${r.stderr}`);
  return r.stdout;
}
const read = (f: string) => readFileSync(join(dir, f), 'utf8');
const sha = (f: string) => createHash('sha256').update(readFileSync(join(dir, f))).digest('hex');
const FILES = ['machines.txt', 'cluster.yaml', 'known_hosts', 'ssh_config', 'id_ed25519', 'id_ed25519.pub'];

async function ok(r: Promise<RunResult>, what: string): Promise<RunResult> {
  const x = await r;
  if (x.code !== 0) throw new Error(`${what} failed (exit ${x.code}):\n${x.stderr}\n${x.stdout}`);
  return x;
}

/** `hardway STEP --json`: its changed count (throws unless it exited 0). */
async function step(name: string): Promise<number> {
  const r = await ok(hw(name, '--json'), `hardway ${name}`);
  return (JSON.parse(r.stdout) as { changed: number }).changed;
}

beforeAll(async () => {
  if (process.getuid?.() !== 0) throw new Error('the multipass e2e suite needs root (its stand-in boots lab machines)');
  await downLab(LAB);
  dir = mkdtempSync(join(tmpdir(), 'hardway-e2e-mp-'));
  stateDir = mkdtempSync(join(tmpdir(), 'hardway-e2e-mp-state-'));
  env = {
    PATH: `${STAND_IN}:${process.env.PATH}`,
    HARDWAY_MULTIPASS_STANDIN_LAB: LAB,
    HARDWAY_MULTIPASS_STANDIN_SUBNET: SUBNET,
    HARDWAY_MULTIPASS_STATE: stateDir,
  };
});

afterAll(async () => {
  await downLab(LAB); // every VM of the stand-in, whatever happened
  for (const d of [dir, stateDir]) if (d) rmSync(d, { recursive: true, force: true });
});

describe('hardway multipass on the multipass stand-in', () => {
  it('up launches three VMs and writes files that let strict SSH in at once: the host keys were pinned before any connection', async () => {
    const up = await ok(hw('multipass', 'up', '--name', PREFIX, '--dir', dir, '--timeout', '300'), 'multipass up');
    expect(up.stdout).toContain(`launched: ${VMS.map((v) => `${PREFIX}-${v}`).join(', ')}`);
    expect(read('machines.txt')).toBe(`# Multipass "${PREFIX}" (hardway multipass up): IP FQDN HOSTNAME [POD_SUBNET]\n`
      + '10.240.70.10 server.kubernetes.local server\n10.240.70.11 node-0.kubernetes.local node-0 10.200.0.0/24\n'
      + '10.240.70.12 node-1.kubernetes.local node-1 10.200.1.0/24\n');
    expect(parseDocument(read('cluster.yaml')).toJS()).toEqual({ ssh: { user: 'root', identityFile: 'id_ed25519', knownHosts: 'known_hosts' } });
    const inv = await hw('inventory');
    expect(inv.code, inv.stderr).toBe(0);
    // The addresses are Multipass's (info --format json of the stand-in).
    const info = parseInfo((await ok(multipass('info', '--format', 'json', ...VMS.map((v) => `${PREFIX}-${v}`)), 'info')).stdout);
    for (const v of VMS) expect(info.get(`${PREFIX}-${v}`)!.ipv4[0]).toBe(IPS[v]);

    const pinned = read('known_hosts');
    for (const v of VMS) {
      // No ssh_config, no other known_hosts: strict checking against the file up wrote.
      const r = await run('ssh', ['-F', '/dev/null', '-o', 'BatchMode=yes', '-o', 'StrictHostKeyChecking=yes', '-o', `UserKnownHostsFile=${join(dir, 'known_hosts')}`,
        '-o', 'GlobalKnownHostsFile=/dev/null', '-o', 'IdentitiesOnly=yes', '-i', join(dir, 'id_ed25519'), `root@${IPS[v]}`,
        'hostname; hostname -f; cat /etc/ssh/ssh_host_ed25519_key.pub; ls /etc/ssh/ | grep -c "^ssh_host_"; cat /etc/hardway/multipass-vm; cat /etc/hosts']);
      expect(r.stderr).toBe('');
      const [host, fqdn, hostKey, keyFiles] = r.stdout.split('\n');
      expect([host, fqdn]).toEqual([v, `${v}.kubernetes.local`]);
      expect(pinned).toContain(`${IPS[v]},${v},${v}.kubernetes.local,${PREFIX}-${v} ${hostKey!.split(' ').slice(0, 2).join(' ')}\n`);
      expect(keyFiles).toBe('2'); // the ed25519 pair hardway generated, and no other host key
      expect(r.stdout).toContain(`vm=${PREFIX}-${v}\n`);
      // cloud-init owns /etc/hosts (manage_etc_hosts), as on a Multipass VM.
      expect(r.stdout).toContain(`# Your system has configured 'manage_etc_hosts' as True.`);
      expect(r.stdout).toContain(`127.0.1.1 ${v}.kubernetes.local ${v}\n`);
    }
    expect(read('known_hosts')).toBe(pinned); // nothing was learned on first use
  });

  it('a rerun launches nothing and changes no file; a VM deleted by hand is launched again, alone, with a new pinned key', async () => {
    const before = FILES.map(sha);
    const again = await ok(hw('multipass', 'up', '--name', PREFIX, '--dir', dir), 'multipass up (rerun)');
    expect(again.stdout).toContain(`already running, kept: ${VMS.map((v) => `${PREFIX}-${v}`).join(', ')}`);
    expect(again.stdout).not.toContain('launched:');
    expect(FILES.map(sha)).toEqual(before);

    const oldLines = read('known_hosts').split('\n');
    await ok(multipass('delete', '--purge', `${PREFIX}-node-1`), 'multipass delete --purge');
    const third = await ok(hw('multipass', 'up', '--name', PREFIX, '--dir', dir), 'multipass up (after a delete)');
    expect(third.stdout).toContain(`launched: ${PREFIX}-node-1\n`);
    expect(third.stdout).toContain(`already running, kept: ${PREFIX}-server, ${PREFIX}-node-0`);
    const lines = read('known_hosts').split('\n');
    expect(lines.slice(0, 2)).toEqual(oldLines.slice(0, 2));
    expect(lines[2]).toMatch(/^10\.240\.70\.12,node-1,/);
    expect(lines[2]).not.toBe(oldLines[2]);
    expect((await ssh('node-1', 'hostname')).trim()).toBe('node-1');
  });

  it('hardway\'s steps that need no Kubernetes binaries converge on the VMs, and a second run changes nothing', async () => {
    // Debian's etcd, containerd, runc, CNI plugins and kubectl into downloads/ (the server binaries
    // are left to the full `hardway up` test below).
    await downloadFromDebian({
      projectDir: dir, arch: await hostArch(), cache: cacheDir(process.env), aptListsRoot: join(dirname(cacheDir(process.env)), 'apt-lists'),
      buildServer: false, log: () => undefined,
    });
    for (const c of ['certs', 'kubeconfigs', 'encryption-config']) await ok(hw(c), `hardway ${c}`);
    const steps = ['pin-hosts', 'distribute', 'bootstrap-etcd', 'routes'];
    for (const s of steps) expect(await step(s), s).toBeGreaterThan(0);
    for (const s of steps) expect(await step(s), `${s} (rerun)`).toBe(0);
    expect((await ssh('server', 'systemctl is-active etcd')).trim()).toBe('active');
    expect(await ssh('node-0', 'ip route show 10.200.1.0/24')).toContain('via 10.240.70.12');
  });

  it('hardway up converges the whole cluster on the VMs', async () => {
    await ok(hw('download', '--source', 'debian'), 'hardway download --source debian');
    await ok(hw('build-images'), 'hardway build-images');
    // Container machines, not VMs: the settings `hardway lab up` writes for its own machines.
    const doc = parseDocument(read('cluster.yaml'));
    doc.setIn(['containerd', 'restrictOomScoreAdj'], true);
    doc.setIn(['kubeProxy', 'conntrackMaxPerCore'], 0);
    doc.set('sandboxImage', PAUSE_IMAGE);
    writeFileSync(join(dir, 'cluster.yaml'), doc.toString());
    const up = await hw('up', '--keep-going', '--ready-timeout', '180');
    expect(up.code, `${up.stdout}\n${up.stderr}`).toBe(0);
  });

  it('after `multipass restart` of a worker, cloud-init has rewritten /etc/hosts and every name still resolves there', async () => {
    await ssh('node-0', "echo '# added by hand before the restart' >> /etc/hosts");
    const boot = (await ssh('node-0', 'cat /proc/sys/kernel/random/boot_id; cut -d" " -f22 /proc/1/stat')).trim();
    await ok(multipass('restart', `${PREFIX}-node-0`), 'multipass restart');
    expect((await ssh('node-0', 'cat /proc/sys/kernel/random/boot_id; cut -d" " -f22 /proc/1/stat')).trim()).not.toBe(boot);
    const hosts = await ssh('node-0', 'cat /etc/hosts');
    expect(hosts).not.toContain('added by hand'); // cloud-init really rewrote it at boot
    expect(hosts).toContain(HOSTS_MARKERS.begin);
    const names = VMS.flatMap((v) => [v, `${v}.kubernetes.local`]);
    const resolved = await ssh('node-0', names.map((n) => `printf '%s %s\\n' ${n} "$(getent hosts ${n} | head -n1 | cut -d' ' -f1)"`).join('; '));
    expect(resolved.trim().split('\n')).toEqual(VMS.flatMap((v) => [`${v} ${IPS[v]}`, `${v}.kubernetes.local ${IPS[v]}`]));
    expect(await step('pin-hosts')).toBe(0);
    const status = await hw('multipass', 'status', '--json');
    expect(status.code, status.stderr).toBe(0);
    const s = JSON.parse(status.stdout) as { vms: Array<{ vm: string; state: string; ssh: boolean }> };
    expect(s.vms.map((v) => `${v.vm} ${v.state} ${v.ssh}`)).toEqual(VMS.map((v) => `${PREFIX}-${v} Running true`));
  });

  it('an address that changed since machines.txt was written: status names it and exits 1, up rewrites it', async () => {
    const good = read('machines.txt');
    writeFileSync(join(dir, 'machines.txt'), good.replace('10.240.70.12 node-1', '10.240.70.99 node-1'));
    const status = await hw('multipass', 'status');
    expect(status.code).toBe(1);
    expect(status.stderr).toContain('address changed since machines.txt was written:\n  node-1 (e2emp-node-1): 10.240.70.99 in machines.txt, now 10.240.70.12');
    expect(status.stderr).toContain(`hint: run "hardway multipass up --name ${PREFIX}"`);
    const up = await ok(hw('multipass', 'up', '--name', PREFIX, '--dir', dir), 'multipass up (rewrite)');
    expect(up.stdout).toContain('node-1 (e2emp-node-1): 10.240.70.99 in machines.txt, now 10.240.70.12');
    expect(read('machines.txt')).toBe(good);
    expect((await hw('multipass', 'status')).code).toBe(0);
  });

  it('down deletes and purges only the VMs hardway launched: one launched by hand with the same prefix stays', async () => {
    writeFileSync(join(dir, 'scratch.yaml'), '#cloud-config\nmanage_etc_hosts: true\n');
    await ok(multipass('launch', '--name', `${PREFIX}-scratch`, '--cloud-init', join(dir, 'scratch.yaml'), '24.04'), 'multipass launch (by hand)');
    const down = await hw('multipass', 'down', '--name', PREFIX, '--yes');
    expect(down.code, down.stderr).toBe(0);
    expect(down.stdout).toBe(`deleted and purged: ${VMS.map((v) => `${PREFIX}-${v}`).join(', ')}\n`
      + `left alone: ${PREFIX}-scratch: hardway did not launch it (not in its record)\n`);
    const left = parseList((await ok(multipass('list', '--format', 'json'), 'list')).stdout);
    expect(left.map((i) => `${i.name} ${i.state}`)).toEqual([`${PREFIX}-scratch Running`]);
    expect(existsSync(join(stateDir, `${PREFIX}.json`))).toBe(false);
    expect(existsSync(join(dir, 'machines.txt'))).toBe(true); // the files stay, as with lab down
    const again = await hw('multipass', 'down', '--name', PREFIX, '--yes');
    expect(again.stdout).toContain(`hardway has launched no Multipass VMs named "${PREFIX}-...": nothing to delete`);
  });
});
