// Every step's plan as data, the two cases pyinfra's operation tests have: a fresh machine plans
// the changes expected, and the machine those changes leave behind plans none. Plans run on the
// fake Debian machine with `planning` set, so a plan that tried to write (or ran a command the
// machine does not know) fails here. pin-hosts and images have suites of their own
// (pin-hosts.test.ts, images-step.test.ts); verify is a check and smoke an action: neither plans.
import { beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { applyChange, describeChange } from '../../src/engine/apply.ts';
import type { Change, ChangeStep } from '../../src/engine/types.ts';
import type { Inventory } from '../../src/inventory.ts';
import { bootstrapControlPlaneStep } from '../../src/steps/bootstrap-control-plane.ts';
import { bootstrapEtcdStep } from '../../src/steps/bootstrap-etcd.ts';
import { cniStep } from '../../src/steps/cni.ts';
import { containerdStep } from '../../src/steps/containerd.ts';
import { distributeStep } from '../../src/steps/distribute.ts';
import { kubeProxyStep } from '../../src/steps/kube-proxy.ts';
import { kubeletRbacStep, liveObjectsMatch, RBAC_MANIFEST } from '../../src/steps/kubelet-rbac.ts';
import { kubeletStep } from '../../src/steps/kubelet.ts';
import { routesStep } from '../../src/steps/routes.ts';
import { workerOsStep } from '../../src/steps/worker-os.ts';
import { debianMachine } from '../fixtures/debian-machine.ts';
import { FakeMachineError } from '../fixtures/fake-transport.ts';
import { planOn, project } from './step-plans.helpers.ts';

/** Each step, the machine it is tested on, and lines its plan on a fresh machine must have (in order). */
const CASES: Array<{ step: ChangeStep; on: string; setup?: (t: ReturnType<typeof debianMachine>) => void; fresh: string[] }> = [
  { step: distributeStep, on: 'server', fresh: ['put /var/lib/kubernetes/ca.crt 0644', 'put /var/lib/kubernetes/ca.key 0600 root:root (secret) (missing)', 'put /var/lib/kubernetes/kube-api-server.key'] },
  { step: distributeStep, on: 'node-0', fresh: ['put /var/lib/kubelet/ca.crt 0644', 'put /var/lib/kubelet/kubelet.key 0600 root:root (secret) (missing)', 'put /var/lib/kube-proxy/kubeconfig 0600'] },
  { step: bootstrapEtcdStep, on: 'server', fresh: ['run: install -d -m 0700 /var/lib/etcd', 'put /usr/local/bin/etcd 0755', 'put /etc/systemd/system/etcd.service', 'run: systemctl enable --no-reload etcd', 'run: { systemctl restart etcd'] },
  { step: bootstrapControlPlaneStep, on: 'server', fresh: ['put /usr/local/bin/kube-apiserver 0755', 'put /etc/systemd/system/kube-apiserver.service', 'run: systemctl enable --no-reload kube-apiserver', 'run: { systemctl restart kube-apiserver', 'run: { systemctl restart kube-scheduler'] },
  { step: kubeletRbacStep, on: 'server', setup: (t) => void t.state.units.set('kube-apiserver', { enabled: 'enabled', active: 'active' }), fresh: ['run: kubectl --kubeconfig=/var/lib/kubernetes/admin.kubeconfig --request-timeout=5s apply -f -'] },
  { step: workerOsStep, on: 'node-0', fresh: ['run: export DEBIAN_FRONTEND=noninteractive; had=$(dpkg-query -W -f=\'${Package}\\n\'); apt-get update -qq && apt-get install -y -qq socat conntrack ipset && mkdir -p /var/lib/hardway', 'run: systemctl mask --no-reload swap.target', 'run: modprobe br_netfilter', 'put /etc/sysctl.d/90-hardway-kubernetes.conf', 'run: sysctl -q -p /etc/sysctl.d/90-hardway-kubernetes.conf'] },
  { step: containerdStep, on: 'node-0', fresh: ['put /usr/local/bin/containerd 0755', 'put /etc/containerd/config.toml', 'put /etc/systemd/system/containerd.service', 'run: systemctl enable --no-reload containerd', 'run: { systemctl restart containerd'] },
  { step: cniStep, on: 'node-0', fresh: ['put /opt/cni/bin/bridge 0755', 'put /etc/cni/net.d/10-bridge.conf', 'put /etc/cni/net.d/99-loopback.conf'] },
  { step: kubeletStep, on: 'node-0', fresh: ['put /usr/local/bin/kubelet 0755', 'put /var/lib/kubelet/kubelet-config.yaml', 'put /etc/systemd/system/kubelet.service', 'run: { systemctl restart kubelet'] },
  { step: kubeProxyStep, on: 'node-0', fresh: ['put /usr/local/bin/kube-proxy 0755', 'put /var/lib/kube-proxy/kube-proxy-config.yaml', 'put /etc/systemd/system/kube-proxy.service', 'run: { systemctl restart kube-proxy'] },
  { step: routesStep, on: 'server', fresh: ['run: ip route replace 10.200.0.0/24 via 10.240.0.20 && ip route replace 10.200.1.0/24 via 10.240.0.21', 'put /etc/systemd/system/hardway-pod-routes.service', 'run: systemctl enable --no-reload hardway-pod-routes'] },
  { step: routesStep, on: 'node-0', fresh: ['run: ip route replace 10.200.1.0/24 via 10.240.0.21', 'put /etc/systemd/system/hardway-pod-routes.service'] },
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
      expect(t.changesRun.filter((cmd) => !t.reads.some((re) => re.test(cmd))), 'a plan ran a command that is not a read').toEqual([]);
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
