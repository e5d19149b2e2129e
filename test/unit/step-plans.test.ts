// Every step's plan as data, the two cases pyinfra's operation tests have: a fresh machine plans
// the changes expected, and the machine those changes leave behind plans none. Plans run on the
// fake Debian machine with `planning` set, so a plan that tried to write (or ran a command the
// machine does not know) fails here. pin-hosts and images have suites of their own
// (pin-hosts.test.ts, images-step.test.ts); verify is a check and smoke an action: neither plans.
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { applyChange, describeChange } from '../../src/engine/apply.ts';
import type { Change, ChangeStep } from '../../src/engine/types.ts';
import type { Inventory } from '../../src/inventory.ts';
import { apiProxyStep } from '../../src/steps/api-proxy.ts';
import { bootstrapControlPlaneStep } from '../../src/steps/bootstrap-control-plane.ts';
import { bootstrapEtcdStep } from '../../src/steps/bootstrap-etcd.ts';
import { cniStep } from '../../src/steps/cni.ts';
import { containerdStep } from '../../src/steps/containerd.ts';
import { distributeStep } from '../../src/steps/distribute.ts';
import { kubeProxyStep } from '../../src/steps/kube-proxy.ts';
import { kubeletRbacStep, liveObjectsMatch, RBAC_MANIFEST } from '../../src/steps/kubelet-rbac.ts';
import { kubeletStep } from '../../src/steps/kubelet.ts';
import { podForwardingStep } from '../../src/steps/pod-forwarding.ts';
import { routesStep } from '../../src/steps/routes.ts';
import { etcdSnapshotsStep } from '../../src/steps/etcd-snapshots.ts';
import { workerOsStep } from '../../src/steps/worker-os.ts';
import { debianMachine } from '../fixtures/debian-machine.ts';
import { FakeMachineError } from '../fixtures/fake-transport.ts';
import { planOn, project } from './step-plans.helpers.ts';
import { stepOptions } from './engine.helpers.ts';

/** Each step, the machine it is tested on, and lines its plan on a fresh machine must have (in order). */
const CASES: Array<{ step: ChangeStep; on: string; setup?: (t: ReturnType<typeof debianMachine>) => void; fresh: string[] }> = [
  { step: distributeStep, on: 'server', fresh: ['put /var/lib/kubernetes/ca.crt 0644', 'put /var/lib/kubernetes/ca.key 0600 root:root (secret) (missing)', 'put /var/lib/kubernetes/kube-api-server.key'] },
  { step: distributeStep, on: 'node-0', fresh: ['put /var/lib/kubelet/ca.crt 0644', 'put /var/lib/kubelet/kubelet.key 0600 root:root (secret) (missing)', 'put /var/lib/kube-proxy/kubeconfig 0600'] },
  { step: bootstrapEtcdStep, on: 'server', fresh: ['run: install -d -m 0700 /var/lib/etcd', 'put /usr/local/bin/etcd 0755', 'put /etc/systemd/system/etcd.service', 'run: systemctl enable --no-reload etcd', 'run: { systemctl restart etcd'] },
  { step: bootstrapControlPlaneStep, on: 'server', fresh: ['put /usr/local/bin/kube-apiserver 0755', 'put /etc/systemd/system/kube-apiserver.service', 'run: systemctl enable --no-reload kube-apiserver', 'run: { systemctl restart kube-apiserver', 'run: { systemctl restart kube-scheduler'] },
  { step: kubeletRbacStep, on: 'server', setup: (t) => void t.state.units.set('kube-apiserver', { enabled: 'enabled', active: 'active' }), fresh: ['api: apply clusterrole/system:kube-apiserver-to-kubelet, clusterrolebinding/system:kube-apiserver-to-kubelet (system:kube-apiserver-to-kubelet missing or different)'] },
  { step: workerOsStep, on: 'node-0', fresh: ['run: export DEBIAN_FRONTEND=noninteractive; had=$(dpkg-query -W -f=\'${Package}\\n\'); apt-get update -qq && apt-get install -y -qq socat conntrack ipset && mkdir -p /var/lib/hardway', 'run: systemctl mask swap.target', 'run: modprobe br_netfilter', 'put /etc/sysctl.d/90-hardway-kubernetes.conf', 'run: sysctl -q -p /etc/sysctl.d/90-hardway-kubernetes.conf'] },
  { step: containerdStep, on: 'node-0', fresh: ['put /usr/local/bin/containerd 0755', 'put /etc/containerd/config.toml', 'put /etc/systemd/system/containerd.service', 'run: systemctl enable --no-reload containerd', 'run: { systemctl restart containerd'] },
  { step: cniStep, on: 'node-0', fresh: ['put /opt/cni/bin/bridge 0755', 'put /etc/cni/net.d/10-bridge.conf', 'put /etc/cni/net.d/99-loopback.conf'] },
  { step: kubeletStep, on: 'node-0', fresh: ['put /usr/local/bin/kubelet 0755', 'put /var/lib/kubelet/kubelet-config.yaml', 'put /etc/systemd/system/kubelet.service', 'run: { systemctl restart kubelet'] },
  { step: kubeProxyStep, on: 'node-0', fresh: ['put /usr/local/bin/kube-proxy 0755', 'put /var/lib/kube-proxy/kube-proxy-config.yaml', 'put /etc/systemd/system/kube-proxy.service', 'run: { systemctl restart kube-proxy'] },
  { step: routesStep, on: 'server', fresh: ['run: ip route replace 10.200.0.0/24 via 10.240.0.20 && ip route replace 10.200.1.0/24 via 10.240.0.21', 'put /etc/systemd/system/hardway-pod-routes.service', 'run: systemctl enable --no-reload hardway-pod-routes'] },
  { step: routesStep, on: 'node-0', fresh: ['run: ip route replace 10.200.1.0/24 via 10.240.0.21', 'put /etc/systemd/system/hardway-pod-routes.service'] },
  { step: podForwardingStep, on: 'node-0', fresh: ['run: iptables -w -N HARDWAY-FORWARD && iptables -w -F HARDWAY-FORWARD && iptables -w -A HARDWAY-FORWARD -s 10.200.0.0/16 -j ACCEPT && iptables -w -A HARDWAY-FORWARD -d 10.200.0.0/16 -j ACCEPT && iptables -w -I FORWARD 1 -j HARDWAY-FORWARD', 'put /etc/systemd/system/hardway-pod-forwarding.service', 'run: systemctl enable --no-reload hardway-pod-forwarding', 'run: { systemctl start hardway-pod-forwarding'] },
];

describe('every step plans from facts: fresh machine -> its changes, converged machine -> none', () => {
  let inv: Inventory;
  beforeAll(async () => {
    inv = await project();
  });

  for (const c of CASES) {
    it(`${c.step.name} on ${c.on}`, async () => {
      const machine = inv.machines.find((m) => m.hostname === c.on)!;
      const t = debianMachine(c.on);
      c.setup?.(t);
      const fresh = await planOn(c.step, inv, machine, t);
      const lines = fresh.map(describeChange);
      let at = -1;
      for (const want of c.fresh) {
        const found = lines.findIndex((l, i) => i > at && l.startsWith(want));
        expect(found, `${want}\nin:\n${lines.join('\n')}`).toBeGreaterThan(at);
        at = found;
      }
      expect(t.changesRun, 'a plan ran a command that is not a probe of the registry').toEqual([]);
      expect(t.uploads).toEqual([]);
      for (const change of fresh) await applyChange(t, change);
      expect((await planOn(c.step, inv, machine, t)).map(describeChange)).toEqual([]);
    });
  }

  it('a plan that writes fails on the fake machine', async () => {
    const t = debianMachine('node-0');
    t.planning = true;
    await expect(t.upload('/etc/x', { data: Buffer.from('x') }, { mode: 0o644 })).rejects.toThrow(FakeMachineError);
    await expect(t.exec({ text: 'systemctl restart kubelet' } as never)).rejects.toThrow(/not a read/);
  });
});

describe("cni after a worker's pod subnet changed", () => {
  it('takes the old gateway off cni0 and has the kubelet make every pod sandbox anew (new addresses); then nothing', async () => {
    const inv = await project();
    const machine = inv.machines.find((m) => m.hostname === 'node-0')!;
    const t = debianMachine('node-0');
    for (const change of await planOn(cniStep, inv, machine, t)) await applyChange(t, change);
    // Pods ran in the old subnet: the bridge holds its gateway.
    t.state.cni0 = ['10.200.9.1/24'];
    const lines = (await planOn(cniStep, inv, machine, t)).map(describeChange);
    expect(lines).toEqual(['run: ip addr del 10.200.9.1/24 dev cni0 (cni0 still has 10.200.9.1/24, outside this worker\'s pod subnet ' +
      `${machine.podSubnet}: new pods would get no network)`, expect.stringMatching(/^run: PATH=\$PATH:\/usr\/local\/bin; for s in \$\(ctr -n k8s.io containers ls -q .*tasks kill -s SIGKILL .*\(the pods on node-0 have addresses of the old pod subnet: the kubelet makes their sandboxes anew in /)]);
    for (const change of await planOn(cniStep, inv, machine, t)) await applyChange(t, change);
    expect(t.state.sandboxRestarts).toBe(1);
    expect(t.state.cni0).toEqual([`${machine.podSubnet!.replace(/\.0\/24$/, '.1')}/24`]);
    expect((await planOn(cniStep, inv, machine, t)).map(describeChange)).toEqual([]);
  });
});

describe('the kubelet resolver file follows systemd-resolved, asked with the service states', () => {
  let inv: Inventory;
  beforeAll(async () => {
    inv = await project();
  });
  for (const [state, want] of [['active', '/run/systemd/resolve/resolv.conf'], ['inactive', '/etc/resolv.conf']] as const) {
    it(`systemd-resolved ${state}: resolvConf ${want}, and no systemctl of its own`, async () => {
      const machine = inv.machines.find((m) => m.hostname === 'node-0')!;
      const t = debianMachine('node-0');
      t.state.units.set('systemd-resolved', { enabled: 'enabled', active: state });
      const plan = await planOn(kubeletStep, inv, machine, t);
      const config = plan.find((c) => c.kind === 'put' && c.path === '/var/lib/kubelet/kubelet-config.yaml');
      expect(config && config.kind === 'put' && Buffer.isBuffer(config.content) ? config.content.toString() : '').toContain(`resolvConf: "${want}"`);
      expect(t.commands.filter((c) => c.includes('systemctl is-active'))).toEqual([]);
    });
  }
});

/** Three control planes and two workers (test/fixtures/ha/machines.txt). */
const HA_MACHINES = readFileSync(new URL('../fixtures/ha/machines.txt', import.meta.url), 'utf8');

describe('several control planes: the worker steps that differ plan from facts too', () => {
  let inv: Inventory;
  beforeAll(async () => {
    inv = await project(HA_MACHINES);
  });
  const HA_CASES: typeof CASES = [
    { step: workerOsStep, on: 'node-0', setup: (t) => void t.state.packagesMissing.push('haproxy'), fresh: ["run: export DEBIAN_FRONTEND=noninteractive; had=$(dpkg-query -W -f='${Package}\\n'); apt-get update -qq && apt-get install -y -qq socat conntrack ipset haproxy &&"] },
    { step: apiProxyStep, on: 'node-0', fresh: ['put /etc/haproxy/hardway-api-proxy.cfg 0644', 'put /etc/systemd/system/haproxy.service.d/hardway-api-proxy.conf 0644', 'run: systemctl daemon-reload', 'run: systemctl enable --no-reload haproxy', 'run: { systemctl restart haproxy'] },
  ];
  for (const c of HA_CASES) {
    it(`${c.step.name} on ${c.on} of a cluster with three control planes`, async () => {
      const machine = inv.machines.find((m) => m.hostname === c.on)!;
      const t = debianMachine(c.on);
      // haproxy came with the package, disabled (as the lab's machines have it).
      if (c.step === apiProxyStep) t.state.units.set('haproxy', { enabled: 'disabled', active: 'inactive' });
      c.setup?.(t);
      const lines = (await planOn(c.step, inv, machine, t)).map(describeChange);
      let at = -1;
      for (const want of c.fresh) {
        const found = lines.findIndex((l, i) => i > at && l.startsWith(want));
        expect(found, `${want}\nin:\n${lines.join('\n')}`).toBeGreaterThan(at);
        at = found;
      }
      for (const change of await planOn(c.step, inv, machine, t)) await applyChange(t, change);
      expect((await planOn(c.step, inv, machine, t)).map(describeChange)).toEqual([]);
    });
  }

  it('api-proxy refuses a worker without haproxy, naming the command that installs it, and plans nothing with one control plane', async () => {
    const t = debianMachine('node-0');
    t.state.packagesMissing.push('haproxy');
    await expect(planOn(apiProxyStep, inv, inv.machines.find((m) => m.hostname === 'node-0')!, t))
      .rejects.toThrow(/\/usr\/sbin\/haproxy is not installed[\s\S]*/);
    const single = await project();
    expect(apiProxyStep.targets(single, stepOptions())).toEqual([]);
    expect(apiProxyStep.idle?.(single)).toMatch(/one control-plane machine/);
    expect(apiProxyStep.targets(inv, stepOptions()).map((m) => m.hostname)).toEqual(['node-0', 'node-1']);
  });
});

describe('kubelet-rbac compares the live objects field by field', () => {
  const live = (edit: (items: Record<string, any>[]) => void = () => {}) => {
    const items = parseAllDocuments(RBAC_MANIFEST).map((d) => d.toJSON());
    items[0].metadata.annotations['kubectl.kubernetes.io/last-applied-configuration'] = '{}';
    edit(items);
    return JSON.stringify({ kind: 'List', items });
  };
  it('finds nothing to do when both objects hold every field of the manifest (extra fields the API adds are fine)', () => {
    expect(liveObjectsMatch(live())).toBe(true);
  });
  it('applies when an object is missing, a rule differs or a subject was added', () => {
    expect(liveObjectsMatch('')).toBe(false);
    expect(liveObjectsMatch(live((i) => i.pop()))).toBe(false);
    expect(liveObjectsMatch(live((i) => (i[0].rules[0].verbs = ['get'])))).toBe(false);
    expect(liveObjectsMatch(live((i) => i[1].subjects.push({ kind: 'User', name: 'mallory' })))).toBe(false);
  });
});

describe('etcd-snapshots: the timer on the first control plane while etcd.snapshots is set, removed once it is not', () => {
  const withSnapshots = (inv: Inventory, every: string, seconds: number): Inventory => ({ ...inv, settings: { ...inv.settings, etcd: { snapshots: { every, everySeconds: seconds, keep: 2 } } } });

  it('fresh machine -> directory, script, units, timer enabled and started; converged -> none; a new interval restarts the timer; off -> removed; then none', async () => {
    const base = await project();
    const server = base.machines.find((m) => m.hostname === 'server')!;
    const t = debianMachine('server');
    const on = withSnapshots(base, '1m', 60);
    const plan = async (inv: Inventory) => (await planOn(etcdSnapshotsStep, inv, server, t)).map(describeChange);
    expect(await plan(base), 'off on a machine that never had it').toEqual([]);
    const fresh = await planOn(etcdSnapshotsStep, on, server, t);
    const lines = fresh.map(describeChange);
    expect(lines.map((l) => l.replace(/ \(.*$/, '').split(' ').slice(0, 4).join(' '))).toEqual([
      'run: install -d -m',
      'put /usr/local/bin/hardway-etcd-snapshot 0755 root:root',
      'put /etc/systemd/system/hardway-etcd-snapshot.service 0644 root:root',
      'put /etc/systemd/system/hardway-etcd-snapshot.timer 0644 root:root',
      'run: systemctl enable --no-reload',
      'run: { systemctl start',
    ]);
    expect(t.changesRun).toEqual([]);
    for (const c of fresh) await applyChange(t, c);
    const script = t.files.get('/usr/local/bin/hardway-etcd-snapshot')!.content.toString();
    expect(script).toContain('snapshot save "$dir/.$name"');
    expect(script).toContain('tail -n +3 |');
    expect(t.files.get('/etc/systemd/system/hardway-etcd-snapshot.timer')!.content.toString()).toContain('OnUnitActiveSec=60s');
    expect(await plan(on)).toEqual([]);
    // Another interval: the timer file, systemd's reload, and the timer restarted with it.
    const hourly = await plan(withSnapshots(base, '1h', 3600));
    expect(hourly.map((l) => l.split(' ').slice(0, 3).join(' '))).toEqual(['put /etc/systemd/system/hardway-etcd-snapshot.timer 0644', 'run: systemctl daemon-reload', 'run: { systemctl']);
    expect(hourly[2]).toMatch(/^run: \{ systemctl restart hardway-etcd-snapshot.timer /);
    // Off: the timer stopped and its files removed, the snapshots left where they are.
    const off = await planOn(etcdSnapshotsStep, base, server, t);
    expect(off.map(describeChange)).toEqual(['run: { systemctl disable --now hardway-etcd-snapshot.timer || :; } && rm -f /usr/local/bin/hardway-etcd-snapshot /etc/systemd/system/hardway-etcd-snapshot.service /etc/systemd/system/hardway-etcd-snapshot.timer && systemctl daemon-reload (etcd.snapshots is not set in cluster.yaml (the snapshots taken stay in place))']);
    for (const c of off) await applyChange(t, c);
    expect(await plan(base)).toEqual([]);
    expect(t.state.snapshotsDirMode).toBe('700');
  });
});

describe('pod-forwarding: the pod network is forwarded whatever FORWARD says, and kept so', () => {
  let inv: Inventory;
  beforeAll(async () => {
    inv = await project();
  });
  /** node-0 with the step applied once, as a real run leaves it. */
  async function converged() {
    const machine = inv.machines.find((m) => m.hostname === 'node-0')!;
    const t = debianMachine('node-0');
    for (const change of await planOn(podForwardingStep, inv, machine, t)) await applyChange(t, change);
    const plan = async () => (await planOn(podForwardingStep, inv, machine, t)).map(describeChange);
    return { t, plan, apply: async () => { for (const change of await planOn(podForwardingStep, inv, machine, t)) await applyChange(t, change); } };
  }

  it('the chain accepts the cluster CIDR both ways and FORWARD jumps to it first, before the rules already there', async () => {
    const machine = inv.machines.find((m) => m.hostname === 'node-0')!;
    const t = debianMachine('node-0');
    // kube-proxy's jumps are there first, as after its first sync.
    t.state.filter.chains.get('FORWARD')!.push('-m comment --comment "kubernetes forwarding rules" -j KUBE-FORWARD');
    for (const change of await planOn(podForwardingStep, inv, machine, t)) await applyChange(t, change);
    expect(t.state.filter.chains.get('FORWARD')).toEqual(['-j HARDWAY-FORWARD', '-m comment --comment "kubernetes forwarding rules" -j KUBE-FORWARD']);
    expect(t.state.filter.chains.get('HARDWAY-FORWARD')).toEqual(['-s 10.200.0.0/16 -j ACCEPT', '-d 10.200.0.0/16 -j ACCEPT']);
  });

  it('as Docker leaves a machine (policy DROP, DOCKER-USER jumped first) with the jump gone: the jump goes back first; the policy stays', async () => {
    const { t, plan, apply } = await converged();
    const fwd = t.state.filter;
    fwd.policies.set('FORWARD', 'DROP');
    fwd.chains.set('DOCKER-USER', []);
    fwd.chains.set('FORWARD', ['-j DOCKER-USER']);
    expect(await plan()).toEqual(['run: iptables -w -I FORWARD 1 -j HARDWAY-FORWARD (FORWARD does not jump to HARDWAY-FORWARD (policy DROP): pod traffic is dropped by the policy)']);
    await apply();
    expect(fwd.chains.get('FORWARD')).toEqual(['-j HARDWAY-FORWARD', '-j DOCKER-USER']);
    expect(fwd.policies.get('FORWARD')).toBe('DROP');
    expect(await plan()).toEqual([]);
  });

  it('Docker started after hardway (its DOCKER-USER jump before ours, nothing dropping in FORWARD itself): converged, nothing to do', async () => {
    const { t, plan } = await converged();
    t.state.filter.policies.set('FORWARD', 'DROP');
    t.state.filter.chains.set('DOCKER-USER', []);
    t.state.filter.chains.get('FORWARD')!.unshift('-j DOCKER-USER');
    t.state.filter.chains.get('FORWARD')!.push('-j DOCKER-FORWARD');
    expect(await plan()).toEqual([]);
  });

  it('a DROP before the jump: the jump is moved first; a stale rule of an old CIDR goes; a missing chain comes back', async () => {
    const { t, plan, apply } = await converged();
    const fwd = t.state.filter;
    fwd.chains.get('FORWARD')!.unshift('-s 10.200.0.0/16 -j DROP');
    fwd.chains.set('HARDWAY-FORWARD', ['-s 10.99.0.0/16 -j ACCEPT', '-d 10.200.0.0/16 -j ACCEPT']);
    const lines = await plan();
    expect(lines).toEqual([expect.stringMatching(/^run: iptables -w -F HARDWAY-FORWARD && .* && iptables -w -D FORWARD -j HARDWAY-FORWARD && iptables -w -I FORWARD 1 -j HARDWAY-FORWARD \(HARDWAY-FORWARD holds "-s 10\.99\.0\.0\/16 -j ACCEPT", .*stale rules removed\); FORWARD drops pod traffic before it jumps to HARDWAY-FORWARD: "-A FORWARD -s 10\.200\.0\.0\/16 -j DROP"\)$/)]);
    await apply();
    expect(fwd.chains.get('FORWARD')).toEqual(['-j HARDWAY-FORWARD', '-s 10.200.0.0/16 -j DROP']);
    expect(fwd.chains.get('HARDWAY-FORWARD')).toEqual(['-s 10.200.0.0/16 -j ACCEPT', '-d 10.200.0.0/16 -j ACCEPT']);
    expect(await plan()).toEqual([]);
    // A flush of the whole table (a firewall reloading its own rules): chain and jump are back.
    fwd.chains = new Map([['INPUT', []], ['FORWARD', []], ['OUTPUT', []]]);
    expect((await plan())[0]).toMatch(/^run: iptables -w -N HARDWAY-FORWARD && .* -I FORWARD 1 -j HARDWAY-FORWARD /);
    await apply();
    expect(await plan()).toEqual([]);
  });

  it('the unit restores the same rules at boot: the chain, the two ACCEPTs, the jump first unless there', async () => {
    const { t } = await converged();
    const unit = t.files.get('/etc/systemd/system/hardway-pod-forwarding.service')!.content.toString();
    expect(unit).toContain('ExecStart=/usr/sbin/iptables -w -A HARDWAY-FORWARD -s 10.200.0.0/16 -j ACCEPT\nExecStart=/usr/sbin/iptables -w -A HARDWAY-FORWARD -d 10.200.0.0/16 -j ACCEPT\n');
    expect(unit).toContain("ExecStart=/bin/sh -c '/usr/sbin/iptables -w -C FORWARD -j HARDWAY-FORWARD 2>/dev/null || /usr/sbin/iptables -w -I FORWARD 1 -j HARDWAY-FORWARD'");
    expect(t.state.units.get('hardway-pod-forwarding')).toEqual({ enabled: 'enabled', active: 'active' });
  });
});

/** Change steps whose plans are tested in a suite of their own (or in a describe of this file below CASES), and where. */
const PLANS_TESTED_ELSEWHERE: Record<string, string> = {
  'pin-hosts': 'pin-hosts.test.ts', images: 'images-step.test.ts', dns: 'dns-step.test.ts', reset: 'reset.test.ts', 'drain-node': 'remove-node.test.ts',
  'api-proxy': 'step-plans.test.ts', 'etcd-snapshots': 'step-plans.test.ts',
};

describe('the step table and these cases', () => {
  it('every step of the step table loads from src/steps/<its name>.ts, a step of that name, with the options the table gives it', async () => {
    const { STEP_NAMES } = await import('../../src/command-table.ts');
    const { STEPS } = await import('../../src/steps/index.ts');
    expect(Object.keys(STEPS)).toEqual(Object.keys(STEP_NAMES));
    for (const [name, entry] of Object.entries(STEPS)) {
      expect((await entry.load()).name).toBe(name);
      expect(entry.options ?? []).toEqual((STEP_NAMES[name as keyof typeof STEP_NAMES] as { options?: string[] }).options ?? []);
    }
    expect(STEPS.dns.options).toEqual(['api-timeout', 'ready-timeout']);
  });

  it('every change step of the step table has its fresh and converged cases here, or names the suite that has them', async () => {
    const { STEPS } = await import('../../src/steps/index.ts');
    const changeSteps = (await Promise.all(Object.values(STEPS).map((e) => e.load()))).filter((s) => (s.kind ?? 'change') === 'change').map((s) => s.name);
    const untested = changeSteps.filter((name) => !CASES.some((c) => c.step.name === name) && !PLANS_TESTED_ELSEWHERE[name]);
    expect(untested, 'add a case to CASES for each').toEqual([]);
    for (const [name, suite] of Object.entries(PLANS_TESTED_ELSEWHERE)) {
      expect(readFileSync(new URL(suite, import.meta.url), 'utf8'), `${suite} tests ${name}`).toMatch(new RegExp(`from '../../src/steps/${name}.ts'`));
    }
  });
});
