// hardway reset as data: every step of `up` builds the fake Debian machines (server, node-0), then
// reset's plan removes every file those steps put there (so a new step's files are caught here if
// reset does not know them), leaves the machine's own files as they were, and plans nothing the
// second time. Then the pure plan's rules one by one, the text rule of the hosts block, and the
// command's guards (--yes, --delete-data's names).
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { checkRanges } from '../../src/cli/command.ts';
import { remoteEntry } from '../../src/commands/index.ts';
import { remoteCommand } from '../../src/commands/remote.ts';
import { applyChange, describeChange } from '../../src/engine/apply.ts';
import type { ChangeStep } from '../../src/engine/types.ts';
import type { Inventory } from '../../src/inventory.ts';
import { HOSTS_MARKERS } from '../../src/layout.ts';
import { applyMarkedBlock, removeMarkedBlock } from '../../src/render/marked-block.ts';
import { bootstrapControlPlaneStep } from '../../src/steps/bootstrap-control-plane.ts';
import { bootstrapEtcdStep } from '../../src/steps/bootstrap-etcd.ts';
import { cniStep } from '../../src/steps/cni.ts';
import { containerdStep } from '../../src/steps/containerd.ts';
import { distributeStep } from '../../src/steps/distribute.ts';
import { kubeProxyStep } from '../../src/steps/kube-proxy.ts';
import { kubeletRbacStep } from '../../src/steps/kubelet-rbac.ts';
import { kubeletStep } from '../../src/steps/kubelet.ts';
import { STEP_OPTIONS } from '../../src/steps/options.ts';
import { pinHostsStep } from '../../src/steps/pin-hosts.ts';
import { resetStep } from '../../src/steps/reset.ts';
import { podForwardingStep } from '../../src/steps/pod-forwarding.ts';
import { routesStep } from '../../src/steps/routes.ts';
import { etcdSnapshotsStep } from '../../src/steps/etcd-snapshots.ts';
import { HARDWAY_DIR, installedOn, PACKAGES_RECORD, SWAP_MASK_RECORD } from '../../src/steps/support/installed.ts';
import { emptiedDirs, resetChanges, STOP_PODS, type ResetFacts } from '../../src/steps/support/reset-plan.ts';
import { workerOsStep } from '../../src/steps/worker-os.ts';
import { SHA_CACHE } from '../../src/engine/facts.ts';
import { ANY, WORKER } from '../../src/layout.ts';
import { debianMachine } from '../fixtures/debian-machine.ts';
import { DEBIAN_HOSTS_TEMPLATE, DEBIAN_OS_RELEASE, escapeRegExp, type FakeTransport } from '../fixtures/fake-transport.ts';
import { dirEntries, dirNames, fstabLinesWith, mountPoints, pathsPresent } from '../../src/probes/system.ts';
import { iptablesRuleCount, linkExists, netnsNames } from '../../src/probes/network.ts';
import { stepOptions } from './engine.helpers.ts';
import { planOn, project } from './step-plans.helpers.ts';

const TEMPLATE = ANY.cloudHostsTemplate('debian');

/** The steps of `up` that install something, in its order (images needs archives: none here). */
const UP_STEPS: ChangeStep[] = [pinHostsStep, distributeStep, bootstrapEtcdStep, bootstrapControlPlaneStep, kubeletRbacStep, workerOsStep, containerdStep, cniStep, kubeletStep, kubeProxyStep, podForwardingStep, routesStep];

type Machine = ReturnType<typeof debianMachine>;

/** A cloud machine as it boots: its name set, cloud-init managing /etc/hosts from the template. */
function bootedMachine(name: string): Machine {
  const t = debianMachine(name, {
    hostname: name,
    cloudFqdn: `${name}.kubernetes.local`,
    files: {
      '/etc/hostname': `${name}\n`,
      '/etc/os-release': DEBIAN_OS_RELEASE,
      '/etc/cloud/cloud.cfg': 'system_info:\n   distro: debian\n',
      '/var/lib/cloud/instance/cloud-config.txt': '#cloud-config\nmanage_etc_hosts: true\n',
      '/etc/fstab': '# <file system> <mount point> <type> <options> <dump> <pass>\n',
      [TEMPLATE]: DEBIAN_HOSTS_TEMPLATE,
    },
  });
  t.handlers.push([/^cloud-init single --name update_etc_hosts --frequency always$/, () => renderHosts(t)]);
  renderHosts(t);
  addResetHandlers(t);
  return t;
}

/** What the fake's cloud-init renders, as at boot. */
function renderHosts(t: FakeTransport) {
  const text = t.text(TEMPLATE).replace(/^## template:jinja\n/, '').replace(/\{#[\s\S]*?-#\}\s*/g, '')
    .replace(/\{\{\s*hostname\s*\}\}/g, t.hostname).replace(/\{\{\s*fqdn\s*\}\}/g, `${t.hostname}.kubernetes.local`);
  t.files.set(ANY.hosts, { content: Buffer.from(text), mode: 0o644, owner: 'root:root' });
  return { code: 0, stdout: '', stderr: '' };
}

/** Directories of the fake: every parent of a file, and etcd's data directory once made. */
function dirsOf(t: Machine): Set<string> {
  const dirs = new Set<string>();
  for (const p of t.files.keys()) for (let d = p.slice(0, p.lastIndexOf('/')); d; d = d.slice(0, d.lastIndexOf('/'))) dirs.add(d);
  if (t.state.etcdDataDirMode) dirs.add('/var/lib/etcd');
  return dirs;
}

/** The reads and removals reset runs, answered from and applied to the fake's state. */
function addResetHandlers(t: Machine) {
  const ok = (stdout = '') => ({ code: 0, stdout, stderr: '' });
  const children = (d: string) => [...new Set([...t.files.keys(), ...dirsOf(t)].filter((p) => p.startsWith(`${d}/`)).map((p) => `${d}/${p.slice(d.length + 1).split('/')[0]}`))];
  const gone = (p: string) => {
    for (const f of [...t.files.keys()]) if (f === p || f.startsWith(`${p}/`)) t.files.delete(f);
    if (p === '/var/lib/etcd') delete t.state.etcdDataDirMode;
  };
  t.answer(pathsPresent, (paths) => ok(paths.filter((p) => t.files.has(p) || dirsOf(t).has(p)).map((p) => `${p}\n`).join('')))
    .answer(mountPoints, () => ok('/\n/proc\n'))
    .answer(netnsNames, () => ok())
    .answer(linkExists, () => ({ code: 1, stdout: '' }))
    .answer(iptablesRuleCount, () => ({ code: 1, stdout: '0\n' }))
    .answer(dirEntries, (dirs) => ok(dirs.flatMap(children).map((p) => `${p}\n`).join('')))
    .answer(dirNames, (dir) => ok(children(dir).map((p) => `${p.slice(dir.length + 1)}\n`).join('')))
    .answer(fstabLinesWith, () => ({ code: 1, stdout: '0\n' }));
  t.handlers.push(
    [/^systemctl disable --now (.+)$/, (m) => {
      for (const s of m[1]!.split(' ')) t.state.units.set(s, { enabled: 'disabled', active: 'inactive' });
      return ok();
    }],
    [new RegExp(`^${escapeRegExp(STOP_PODS.text)}$`), () => ok()],
    [/^ip route del \S+ via \S+/, (m) => {
      for (const [, dst, via] of m.input.matchAll(/ip route del (\S+) via (\S+)/g)) t.state.routes = t.state.routes.filter((r) => r !== `${dst} via ${via}`);
      return ok();
    }],
    [/^rm -f -- (.+)$/, (m) => (m[1]!.split(' ').forEach((p) => t.files.delete(p)), ok())],
    [/^rm -rf --one-file-system -- (.+)$/, (m) => (m[1]!.split(' ').forEach(gone), ok())],
    [/^rmdir -- (.+)$/, (m) => (m[1]!.split(' ').every((d) => children(d).length === 0) ? ok() : { code: 1, stdout: '', stderr: 'rmdir: Directory not empty' })],
    [/^systemctl daemon-reload && \{ systemctl reset-failed .+ 2>\/dev\/null \|\| true; \}$/, () => ok()],
    [/^systemctl unmask --no-reload swap\.target$/, () => ((t.state.swapMasked = false), ok())],
    [/^DEBIAN_FRONTEND=noninteractive dpkg --purge (.+)$/, (m) => ((t.state.packagesMissing = m[1]!.split(' ')), ok())],
  );
}

/** Plans `step` on the machine and applies it until it plans nothing (at most twice, as the engine would). */
async function converge(step: ChangeStep, inv: Inventory, t: Machine, values: Record<string, string[] | boolean> = {}): Promise<string[]> {
  const machine = inv.machines.find((m) => m.hostname === t.machine)!;
  if (!step.targets(inv, stepOptions()).includes(machine)) return [];
  const planned = await planOn(step, inv, machine, t, stepOptions({ values }));
  for (const c of planned) await applyChange(t, c);
  return planned.map(describeChange);
}

describe('reset on machines every step of up built', () => {
  let inv: Inventory;
  const built = new Map<string, { t: Machine; before: Map<string, string>; uploads: string[] }>();
  beforeAll(async () => {
    inv = await project();
    for (const name of ['server', 'node-0']) {
      const t = bootedMachine(name);
      const before = new Map([...t.files].map(([p, f]) => [p, f.content.toString('utf8')]));
      for (const step of UP_STEPS) await converge(step, inv, t);
      built.set(name, { t, before, uploads: t.uploads.map((u) => u.path) });
    }
  });

  for (const name of ['server', 'node-0']) {
    it(`${name}: reset knows every file the steps installed (a new step's files must be added to what reset derives)`, () => {
      const { uploads } = built.get(name)!;
      const machine = inv.machines.find((m) => m.hostname === name)!;
      const known = new Set([...installedOn(inv, machine, ['bridge', 'host-local', 'loopback']).files, ANY.hosts, TEMPLATE]);
      expect(uploads.length).toBeGreaterThan(10);
      expect(uploads.filter((p) => !known.has(p))).toEqual([]);
    });

    it(`${name}: reset removes them all, leaves the machine's own files as they were, then plans nothing`, async () => {
      const { t, before } = built.get(name)!;
      const planned = await converge(resetStep, inv, t);
      expect(planned.some((l) => l.startsWith('run: systemctl disable --now '))).toBe(true);
      expect(planned.some((l) => l.startsWith('run: rm -f -- '))).toBe(true);
      const left = new Map([...t.files].map(([p, f]) => [p, f.content.toString('utf8')]));
      expect(left).toEqual(before);
      expect(t.state.routes).toEqual([]);
      expect([...t.state.units.values()].filter((u) => u.active === 'active' || u.enabled === 'enabled')).toEqual([]);
      expect(await converge(resetStep, inv, t)).toEqual([]);
      // What worker-os changed and recorded is put back: its packages, the swap mask.
      if (name === 'node-0') expect([t.state.packagesMissing.sort(), t.state.swapMasked]).toEqual([['conntrack', 'ipset', 'socat'], false]);
    });
  }

  it("node-0: reset takes out hardway's pod forwarding chain and FORWARD's jump to it; Docker's chain and the policy stay", async () => {
    const t = bootedMachine('node-0');
    for (const step of UP_STEPS) await converge(step, inv, t);
    const fwd = t.state.filter;
    fwd.policies.set('FORWARD', 'DROP');
    fwd.chains.set('DOCKER-USER', []);
    fwd.chains.get('FORWARD')!.push('-j DOCKER-USER');
    expect(fwd.chains.get('FORWARD')).toEqual(['-j HARDWAY-FORWARD', '-j DOCKER-USER']);
    const planned = await converge(resetStep, inv, t);
    expect(planned).toContain("run: iptables -w -D FORWARD -j HARDWAY-FORWARD && iptables -w -F HARDWAY-FORWARD && iptables -w -X HARDWAY-FORWARD (the pod forwarding chain HARDWAY-FORWARD and FORWARD's jump to it (other rules stay))");
    expect([fwd.policies.get('FORWARD'), fwd.chains.get('FORWARD'), fwd.chains.has('HARDWAY-FORWARD'), fwd.chains.has('DOCKER-USER')]).toEqual(['DROP', ['-j DOCKER-USER'], false, true]);
    expect(await converge(resetStep, inv, t)).toEqual([]);
  });

  it('server with scheduled snapshots: reset stops the timer and removes its files even once etcd.snapshots is unset, the snapshots kept, then plans nothing', async () => {
    const base = await project();
    const on: Inventory = { ...base, settings: { ...base.settings, etcd: { snapshots: { every: '1h', everySeconds: 3600, keep: 2 } } } };
    const t = bootedMachine('server');
    for (const step of [...UP_STEPS, etcdSnapshotsStep]) await converge(step, on, t);
    expect(t.state.units.get('hardway-etcd-snapshot.timer')).toEqual({ enabled: 'enabled', active: 'active' });
    const planned = await converge(resetStep, base, t);
    expect(planned.find((l) => l.startsWith('run: systemctl disable --now '))).toMatch(/^run: systemctl disable --now hardway-etcd-snapshot\.timer /);
    expect([...t.files.keys()].filter((p) => p.includes('etcd-snapshot'))).toEqual([]);
    expect(t.state.units.get('hardway-etcd-snapshot.timer')?.active).toBe('inactive');
    expect(planned.join('\n')).not.toContain('/var/backups');
    expect(await converge(resetStep, base, t)).toEqual([]);
  });

  it("server: etcd's data stays unless asked for by name, and the plan says so", async () => {
    const { t } = built.get('server')!;
    await converge(bootstrapEtcdStep, inv, t);
    const notes: string[] = [];
    const machine = inv.machines.find((m) => m.hostname === 'server')!;
    t.planning = true;
    const { createFacts } = await import('../../src/engine/facts.ts');
    const log = { info: (l: string) => notes.push(l), debug: () => undefined };
    const kept = await resetStep.plan({ host: 'server', machine, inventory: inv, facts: createFacts(t), options: stepOptions(), log });
    t.planning = false;
    expect(kept.map(describeChange).join('\n')).not.toContain('/var/lib/etcd');
    expect(notes).toContain('kept /var/lib/etcd (etcd\'s data: the whole cluster state); "--delete-data etcd" removes it');
    const deleted = await converge(resetStep, inv, t, { 'delete-data': ['etcd'] });
    expect(deleted.find((l) => l.includes('/var/lib/etcd'))).toMatch(/^run: rm -rf --one-file-system -- .*\/var\/lib\/etcd .*asked for with --delete-data etcd/);
    expect(t.state.etcdDataDirMode).toBeUndefined();
    expect(await converge(resetStep, inv, t, { 'delete-data': ['etcd'] })).toEqual([]);
  });
});

describe("reset's plan, rule by rule", () => {
  let inv: Inventory;
  beforeAll(async () => {
    inv = await project();
  });
  const none: ResetFacts = {
    present: new Set(), services: new Map(), mounts: [], routes: [], netns: [], bridge: false, kubeRules: { v4: 0, v6: 0 }, entries: [],
    containerdContent: false, containerdPackage: false, auditLogs: [], hostsFiles: [], fstabNotes: 0, packages: [],
  };
  const plan = (f: Partial<ResetFacts>, deleteEtcdData = false) => {
    const node0 = inv.machines.find((m) => m.hostname === 'node-0')!;
    return resetChanges(inv, installedOn(inv, node0), { ...none, ...f }, { deleteEtcdData });
  };
  const lines = (f: Partial<ResetFacts>) => plan(f).changes.map(describeChange);

  it('a machine with nothing of hardway plans nothing', () => {
    expect(plan({})).toEqual({ changes: [], notes: [] });
  });

  it('stops the kubelet and kube-proxy, then the pods, then containerd', () => {
    const units = ['kubelet', 'kube-proxy', 'containerd'].map((s) => `/etc/systemd/system/${s}.service`);
    const running = new Map(['kubelet', 'kube-proxy', 'containerd'].map((s) => [s, { enabled: 'enabled', active: 'active', loaded: true }]));
    const out = plan({ present: new Set(units), services: running }).changes;
    expect(out.slice(0, 3).map((c) => (c.kind === 'exec' ? c.cmd.text : c.path))).toEqual([
      'systemctl disable --now kube-proxy kubelet', STOP_PODS.text, 'systemctl disable --now containerd',
    ]);
  });

  it('takes the pod network down: netns, the bridge, only the KUBE-/CNI- iptables rules, the mounts deepest first', () => {
    expect(lines({ netns: ['cni-1234', 'other'], bridge: true, kubeRules: { v4: 12, v6: 0 }, mounts: ['/', '/var/lib/kubelet/pods/a/volumes/x', '/var/lib/kubelet/pods/a/volumes/x/y', '/var/lib/containerd', '/srv/data'] })).toEqual([
      'run: ip netns delete cni-1234 (pod network namespaces: cni-1234)',
      'run: ip link delete cni0 (the CNI bridge cni0)',
      "run: iptables-save | grep -vE '^:(KUBE|CNI)-|^-A (KUBE|CNI)-|-j (KUBE|CNI)-' | iptables-restore (12 iptables chains and rules of the kubelet, kube-proxy and the CNI plugin (KUBE-*, CNI-*); other rules stay)",
      'run: for m in /var/lib/kubelet/pods/a/volumes/x/y /var/lib/kubelet/pods/a/volumes/x; do if mountpoint -q "$m"; then umount "$m" || exit 1; fi; done (mounts of pods and containers)',
    ]);
  });

  it('removes the pod routes (via other workers, inside the cluster CIDR) and no other route', () => {
    expect(lines({ routes: [{ dst: 'default', via: '10.240.0.1' }, { dst: '10.200.1.0/24', via: '10.240.0.21' }, { dst: '10.200.0.0/24' }] }))
      .toEqual(["run: ip route del 10.200.1.0/24 via 10.240.0.21 (routes to other workers' pods: 10.200.1.0/24 via 10.240.0.21)"]);
  });

  it("empties containerd's state, keeps the directory when it is a mount point, and keeps it all when Debian's containerd uses it", () => {
    expect(lines({ containerdContent: true })).toEqual(["run: rm -rf --one-file-system -- /var/lib/containerd (containerd's images, snapshots and metadata)"]);
    expect(lines({ containerdContent: true, mounts: ['/var/lib/containerd'] })[0]).toMatch(/^run: find \/var\/lib\/containerd -mindepth 1 -maxdepth 1 -exec rm -rf --one-file-system \{\} \+/);
    expect(plan({ containerdContent: true, containerdPackage: true })).toEqual({ changes: [], notes: ["kept /var/lib/containerd: Debian's containerd package is installed and keeps its state there too"] });
  });

  it('removes a directory only when everything in it goes', () => {
    expect(emptiedDirs(['/etc/cni/net.d', '/etc/cni'], ['/etc/cni/net.d/10-bridge.conf', '/etc/cni/net.d'], new Set(['/etc/cni/net.d/10-bridge.conf']))).toEqual(['/etc/cni/net.d', '/etc/cni']);
    expect(emptiedDirs(['/etc/cni/net.d', '/etc/cni'], ['/etc/cni/net.d/10-bridge.conf', '/etc/cni/net.d/50-mine.conf', '/etc/cni/net.d'], new Set(['/etc/cni/net.d/10-bridge.conf']))).toEqual([]);
  });

  it('does not rmdir a directory an earlier change removed whole (a registry directory hardway marked), but its parent once empty', () => {
    const certs = '/etc/containerd/certs.d';
    const reg = `${certs}/localhost_5001_`;
    // Seen on the lab: rmdir of the registry directory that rm -rf had just removed failed reset and remove-node.
    expect(emptiedDirs([reg, certs], [reg, `${reg}/hosts.toml`, `${reg}/.hardway`], new Set([reg]))).toEqual([certs]);
  });

  it('puts back only what worker-os recorded: its packages, its swap mask, the swap lines it commented out', () => {
    expect(lines({ present: new Set([SWAP_MASK_RECORD]), fstabNotes: 1, packages: ['socat'] })).toEqual([
      'run: systemctl unmask --no-reload swap.target (worker-os masked swap.target)',
      'run: systemctl daemon-reload (systemd forgets the swap mask)',
      "run: sed -i -E 's/^# (.*) # swap disabled by hardway: the kubelet needs swap off$/\\1/' /etc/fstab (1 swap line(s) of /etc/fstab that worker-os commented out (swap comes back at the next boot))",
      'run: DEBIAN_FRONTEND=noninteractive dpkg --purge socat (packages worker-os installed: socat)',
    ]);
  });

  it("with several control planes: removes haproxy's drop-in and hardway's config, never Debian's haproxy.cfg, and puts haproxy back on Debian's config", async () => {
    const ha = await project(readFileSync(new URL('../fixtures/ha/machines.txt', import.meta.url), 'utf8'));
    const node0 = ha.machines.find((m) => m.hostname === 'node-0')!;
    const installed = installedOn(ha, node0);
    expect(installed.files).toEqual(expect.arrayContaining([WORKER.apiProxyConfig, WORKER.apiProxyDropIn]));
    expect(installed.files).not.toContain('/etc/haproxy/haproxy.cfg');
    const present = new Set([WORKER.apiProxyConfig, WORKER.apiProxyDropIn, `${ANY.units}/kubelet.service`]);
    const out = resetChanges(ha, installed, { ...none, present }, { deleteEtcdData: false }).changes.map(describeChange);
    const rm = out.findIndex((l) => l.startsWith('run: rm -f -- ') && l.includes(WORKER.apiProxyDropIn) && l.includes(WORKER.apiProxyConfig));
    const reload = out.findIndex((l) => l.startsWith('run: systemctl daemon-reload'));
    const back = out.findIndex((l) => l.startsWith('run: systemctl try-restart haproxy || systemctl stop haproxy'));
    expect([rm >= 0, rm < reload, reload < back]).toEqual([true, true, true]);
    // No drop-in there: haproxy is not touched.
    expect(resetChanges(ha, installed, { ...none, present: new Set([`${ANY.units}/kubelet.service`]) }, { deleteEtcdData: false }).changes.map(describeChange).join('\n')).not.toContain('haproxy');
  });

  it('the pod-stopping program succeeds when containerd deletes an exited task itself, and fails when a task it still lists cannot be deleted', () => {
    // A fake ctr and systemctl (dash runs the program as the machines' /bin/sh would): task t1 is
    // listed once, then gone, and its delete says "no running task found" (what the CRI plugin's
    // own cleanup leaves); with STUCK=1 it stays listed and every delete fails.
    const bin = mkdtempSync(join(tmpdir(), 'hardway-ctr-'));
    writeFileSync(join(bin, 'systemctl'), '#!/bin/sh\nexit 0\n', { mode: 0o755 });
    writeFileSync(join(bin, 'ctr'), `#!/bin/sh
case "$*" in
  "namespaces ls -q") echo k8s.io ;;
  "-n k8s.io tasks ls -q") if [ -n "$STUCK" ] || [ ! -e "${bin}/listed" ]; then touch "${bin}/listed"; echo t1; fi ;;
  "-n k8s.io tasks rm -f t1") echo "ctr: no running task found: task t1 not found" >&2; exit 1 ;;
  *) exit 0 ;;
esac
`, { mode: 0o755 });
    const run = (env: Record<string, string>) => spawnSync('dash', ['-c', STOP_PODS.text], { env: { PATH: `${bin}:/usr/bin:/bin`, ...env }, encoding: 'utf8' });
    const gone = run({});
    expect([gone.status, gone.stdout]).toEqual([0, 'stopped task k8s.io/t1\n']);
    rmSync(join(bin, 'listed'));
    const stuck = run({ STUCK: '1' });
    expect([stuck.status, stuck.stderr]).toEqual([1, 'ctr: no running task found: task t1 not found\n']);
    rmSync(bin, { recursive: true, force: true });
  });

  it('the pod-stopping program is valid shell, without its comment lines', () => {
    expect(() => execFileSync('sh', ['-n', '-c', STOP_PODS.text])).not.toThrow();
    expect(STOP_PODS.text).not.toMatch(/^#/m);
    expect(STOP_PODS.text).toContain('ctr -n "$ns" tasks rm -f "$task"');
  });

  it("hardway's records live in its own directory, which reset removes whole", () => {
    for (const p of [PACKAGES_RECORD, SWAP_MASK_RECORD, SHA_CACHE, ANY.restartDue, WORKER.imagesDir]) expect(p.startsWith(`${HARDWAY_DIR}/`)).toBe(true);
    expect(installedOn(inv, inv.machines[0]!).data).toContain(HARDWAY_DIR);
  });
});

describe('the hosts block out of a file', () => {
  const block = `${HOSTS_MARKERS.begin}\n10.240.0.10 server.kubernetes.local server\n${HOSTS_MARKERS.end}\n`;
  it('gives back the file pin-hosts added it to, line for line', () => {
    for (const text of ['127.0.0.1 localhost\n::1 localhost\n', '', '# only a comment\n']) {
      expect(removeMarkedBlock(applyMarkedBlock(text, block, HOSTS_MARKERS), HOSTS_MARKERS)).toBe(text);
    }
  });
  it('drops a stray marker line too, and keeps the lines around it', () => {
    expect(removeMarkedBlock(`a\n${HOSTS_MARKERS.end}\nb\n`, HOSTS_MARKERS)).toBe('a\nb\n');
  });
});

describe('the reset command', () => {
  it('refuses to run without --yes, exit 2, pointing at --dry-run', async () => {
    const cmd = remoteCommand(remoteEntry('reset'));
    const ctx = { values: { machines: 'machines.txt' }, positionals: [], stdout: process.stdout, stderr: process.stderr, cwd: '/nonexistent', env: {}, argv: ['reset', '--machines', 'machines.txt'] };
    await expect(cmd.run(ctx as never)).rejects.toMatchObject({
      exitCode: 2,
      message: '"hardway reset" removes every service, file, certificate and route hardway installed on the chosen machines; it runs only with --yes',
      hint: 'run it again with --yes to do it: hardway reset --machines machines.txt --yes\n        or with --dry-run to see what it would do: hardway reset --machines machines.txt --dry-run',
    });
  });
  it('--delete-data takes only the names it knows', () => {
    const options = { 'delete-data': STEP_OPTIONS['delete-data'] };
    expect(() => checkRanges(options, { 'delete-data': ['etcd'] })).not.toThrow();
    expect(() => checkRanges(options, { 'delete-data': ['kubelet'] })).toThrow('--delete-data does not know "kubelet"');
  });
});
