// Doctor's drift and its pods: every step of up planned read-only on a (fake) machine becomes
// evidence; evidence becomes findings with the command that puts the machine back; a drift another
// finding already fixes goes into that finding; a pod that does not start is read from its last
// warning event, and told after (inside) the cause that explains it.
import { describe, expect, it } from 'vitest';
import { applyChange } from '../../src/engine/apply.ts';
import { coalescedFacts } from '../../src/engine/coalesced-facts.ts';
import { createFacts } from '../../src/engine/facts.ts';
import { diagnose } from '../../src/doctor/diagnose.ts';
import { planDrift, upChangeSteps } from '../../src/doctor/drift.ts';
import { fixRuns, fixText, labFix, projectFix, stepsFix } from '../../src/doctor/fixes.ts';
import { PENDING_TOO_LONG_S } from '../../src/doctor/checks/pods.ts';
import type { ApiEvidence, DoctorContext, MachineEvidence } from '../../src/doctor/types.ts';
import { PAUSE_IMAGE } from '../../src/images/names.ts';
import { debianMachine } from '../fixtures/debian-machine.ts';
import { planOn, project } from './step-plans.helpers.ts';
import { DOCTOR_DNS_FIXTURES, recorded } from './doctor.helpers.ts';

/** Recorded healthy evidence with `drift` on one machine and the API's answer changed by `api`. */
function withDrift(machine: string, drift: MachineEvidence['drift'], api: Partial<ApiEvidence> = {}): { ctx: DoctorContext; evidence: MachineEvidence[]; api: ApiEvidence } {
  const r = recorded('healthy');
  return { ctx: r.ctx, evidence: r.evidence.map((e) => (e.machine === machine ? { ...e, drift } : e)), api: { ...r.api, ...api } };
}

const NOW = Date.parse('2026-12-02T12:00:00Z');

/** A pod pinned to node that is stuck as `trouble` says, made `ageS` seconds before NOW. */
function stuck(name: string, node: string, trouble: 'creating' | 'image-pull' | 'crash-loop' | 'pending', why: string, ageS = 300) {
  return { name, namespace: 'default', node, labels: {}, trouble, why, created: new Date(NOW - ageS * 1000).toISOString() };
}

const SANDBOX_EVENT = `Failed to create pod sandbox: rpc error: code = Unknown desc = failed to get sandbox image "${PAUSE_IMAGE}": failed to pull image "${PAUSE_IMAGE}": failed to resolve reference`;
const PLUGIN_EVENT = 'Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network for sandbox "abc": failed to find plugin "bridge" in path [/opt/cni/bin]';

/** The steps that target a worker: the API steps run on the first control plane only. */
const fresh0 = (steps: Awaited<ReturnType<typeof upChangeSteps>>, inv: Awaited<ReturnType<typeof project>>) =>
  steps.filter((s) => s.step.targets(inv, { dryRun: true, verbose: false, keepGoing: false, concurrency: 1, values: {} }).includes(inv.workers[0]!));

describe('doctor plans every step of up read-only on each machine', () => {
  it('a fresh worker drifts in each step it runs (a secret by its path only); once converged nothing; a deleted CNI plugin is cni\'s drift', async () => {
    const inv = await project();
    const node = inv.workers[0]!;
    const t = debianMachine(node.hostname);
    const steps = await upChangeSteps();
    // Checks do not plan; the steps that apply API objects plan like the others (on the first control plane).
    expect(steps.map((s) => s.name)).not.toContain('verify');
    expect(steps.map((s) => s.name)).toEqual(expect.arrayContaining(['dns', 'kubelet-rbac']));
    expect(fresh0(steps, inv).map((s) => s.name)).not.toContain('dns');
    t.planning = true;
    const fresh = await planDrift(inv, node, coalescedFacts(createFacts(t)), steps);
    t.planning = false;
    expect(fresh.map((d) => d.step)).toEqual(expect.arrayContaining(['distribute', 'worker-os', 'containerd', 'cni', 'kubelet', 'kube-proxy']));
    const kubeconfig = fresh.find((d) => d.step === 'distribute')!.changes.find((c) => c.startsWith('/var/lib/kubelet/kubeconfig:'));
    expect(kubeconfig).toMatch(/secret: content not shown/);
    expect(JSON.stringify(fresh)).not.toMatch(/PRIVATE KEY|client-key-data/);

    // Converge the machine step by step, as up would.
    for (const { step } of steps.filter((s) => s.step.targets(inv, { dryRun: false, verbose: false, keepGoing: false, concurrency: 1, values: {} }).includes(node))) {
      for (const change of await planOn(step, inv, node, t)) await applyChange(t, change);
    }
    t.planning = true;
    expect(await planDrift(inv, node, coalescedFacts(createFacts(t)), steps)).toEqual([]);
    t.files.delete('/opt/cni/bin/bridge');
    const drift = await planDrift(inv, node, coalescedFacts(createFacts(t)), steps);
    expect(drift).toEqual([{ step: 'cni', changes: [expect.stringMatching(/^\/opt\/cni\/bin\/bridge: missing/)] }]);
  });

  it("the cluster's own objects: CoreDNS's ConfigMap and Deployment changed in the API are the dns step's drift on the first control plane, with that step as the fix", async () => {
    const inv = await project();
    const server = inv.controlPlanes[0]!;
    const t = debianMachine(server.hostname);
    t.state.units.set('kube-apiserver', { enabled: 'enabled', active: 'active' });
    const steps = (await upChangeSteps()).filter((s) => s.name === 'dns' || s.name === 'kubelet-rbac');
    for (const { step } of steps) for (const change of await planOn(step, inv, server, t)) await applyChange(t, change);
    t.planning = true;
    expect(await planDrift(inv, server, coalescedFacts(createFacts(t)), steps)).toEqual([]);
    t.state.objects.get('configmap/coredns')!.data.Corefile = '.:53 {\n    forward . 8.8.8.8\n}\n';
    t.state.objects.get('deployment/coredns')!.spec.replicas = 0;
    t.state.objects.delete('clusterrolebinding/system:kube-apiserver-to-kubelet');
    const drift = await planDrift(inv, server, coalescedFacts(createFacts(t)), steps);
    expect(drift.map((d) => d.step).sort()).toEqual(['dns', 'kubelet-rbac']);
    expect(drift.find((d) => d.step === 'dns')!.changes.join()).toContain('configmap/coredns, deployment/coredns missing or different');
    const r = recorded('healthy');
    const found = diagnose(r.ctx, r.evidence.map((e) => (e.machine === server.hostname ? { ...e, drift } : e)), r.api);
    expect(found.map((f) => `${f.check} ${f.machine}: ${f.fix}`)).toEqual([
      `drift server: ${fixText(stepsFix(['kubelet-rbac'], 'server'), '')}`,
      `drift server: ${fixText(stepsFix(['dns'], 'server'), '')}`,
    ]);
  });
});

describe('drift and pods as findings', () => {
  it('a drift is a finding naming the machine, the step, what differs, and the command that runs that step there', () => {
    const { ctx, evidence, api } = withDrift('node-1', [{ step: 'images', changes: [`${PAUSE_IMAGE} not in containerd (would run: /usr/local/bin/ctr -n k8s.io images import /var/lib/hardway/images/pause.tar)`] }]);
    const findings = diagnose(ctx, evidence, api);
    expect(findings).toEqual([{
      machine: 'node-1', check: 'drift', fix: 'hardway images --node node-1',
      cause: `node-1 is not as hardway's images step leaves it: ${PAUSE_IMAGE} not in containerd`,
      evidence: `hardway images --node node-1 --dry-run plans 1 change(s): ${PAUSE_IMAGE} not in containerd (would run: /usr/local/bin/ctr -n k8s.io images import /var/lib/hardway/images/pause.tar)`,
    }]);
  });

  it("a NotReady node is told in the evidence of the drift that explains it (a kubeconfig edited by hand: distribute's, with --node)", () => {
    const r = recorded('healthy');
    const nodes = r.api.nodes.map((n) => (n.name === 'node-1' ? { ...n, ready: 'Unknown', reason: 'NodeStatusUnknown', message: 'Kubelet stopped posting node status.' } : n));
    const changes = ['remember that kubelet must restart, should this run stop before it does (would run: touch x)',
      '/var/lib/kubelet/kubeconfig: content differs (secret: content not shown)', 'inputs changed for kubelet (restarted if running) (would run: systemctl restart kubelet)'];
    const { ctx, evidence, api } = withDrift('node-1', [{ step: 'distribute', changes }], { nodes });
    const findings = diagnose(ctx, evidence, api);
    expect(findings).toHaveLength(1);
    expect(findings[0]).toMatchObject({ machine: 'node-1', check: 'drift', fix: 'hardway distribute --node node-1' });
    // What differs first in the cause; every change, in the plan's order, in the evidence.
    expect(findings[0]!.cause).toBe("node-1 is not as hardway's distribute step leaves it: /var/lib/kubelet/kubeconfig: content differs (secret: content not shown); " +
      'inputs changed for kubelet (restarted if running); remember that kubelet must restart, should this run stop before it does');
    expect(findings[0]!.evidence).toContain(`plans 3 change(s): ${changes.join('; ')}`);
    expect(findings[0]!.evidence).toContain('kubectl get nodes: node-1 Ready=Unknown (NodeStatusUnknown');
  });

  it('a drift whose step another finding already runs there goes into that finding; a step of a command with several parts gets --only', () => {
    const r = recorded('cni-config-missing');
    const evidence = r.evidence.map((e) => (e.machine === 'node-1' ? { ...e, drift: [{ step: 'cni' as const, changes: ['/etc/cni/net.d/10-bridge.conf: missing'] }] } : e));
    const findings = diagnose(r.ctx, evidence, r.api);
    expect(findings.map((f) => f.check)).toEqual(['cni']);
    expect(findings[0]!.fix).toBe('hardway bootstrap-workers --only cni --node node-1');
    expect(findings[0]!.evidence).toContain('plan of cni: 1 change(s): /etc/cni/net.d/10-bridge.conf: missing');
  });

  it('containerd stopped: the images step, which cannot list its images then, is told in the containerd finding', () => {
    const r = recorded('containerd-stopped');
    const drift = [{ step: 'images' as const, changes: ['localhost/hardway/pause:1 not known: containerd did not list its images (ctr exit 1) (would run: ctr import)'] }];
    const evidence = r.evidence.map((e) => (e.machine === 'node-0' ? { ...e, drift } : e));
    const findings = diagnose(r.ctx, evidence, r.api);
    expect(findings.map((f) => f.check)).toEqual(['containerd']);
    expect(findings[0]!.evidence).toContain('plan of images: 1 change(s)');
  });

  it("cluster DNS: the dns step's drift on the control plane goes into the finding whose fix runs it (dns-loop's kubelet-dns, fixed everywhere; dns-down's)", () => {
    for (const [scenario, check] of [['dns-loop', 'kubelet-dns'], ['dns-down', 'dns']] as const) {
      const r = recorded(scenario, DOCTOR_DNS_FIXTURES);
      const drift = [{ step: 'dns' as const, changes: ['CoreDNS pod crash-loops (would run: kubectl delete pod)'] }];
      const evidence = r.evidence.map((e) => (e.machine === 'server' ? { ...e, drift } : e));
      const findings = diagnose(r.ctx, evidence, r.api);
      expect(findings.map((f) => f.check)).not.toContain('drift');
      expect(findings[0]!.check).toBe(check);
      expect(findings.map((f) => f.evidence).join(' ')).toContain('plan of dns: 1 change(s)');
    }
  });

  it('knows which steps a fix runs on which machine', () => {
    // hardway bootstrap-workers --only containerd --only kubelet --node node-0, and without kubelet
    expect(fixRuns(stepsFix(['containerd', 'kubelet'], 'node-0'), 'kubelet', 'node-0')).toBe(true);
    expect(fixRuns(stepsFix(['containerd'], 'node-0'), 'kubelet', 'node-0')).toBe(false);
    // hardway up --only kubelet --only dns; hardway distribute --node node-0
    expect(fixRuns(stepsFix(['kubelet', 'dns']), 'kubelet', 'node-1')).toBe(true);
    expect(fixRuns(stepsFix(['distribute'], 'node-0'), 'distribute', 'node-1')).toBe(false);
    // hardway certs --renew node-0 && hardway distribute; hardway lab start node-1 --name x
    expect(fixRuns([...projectFix('certs', '--renew', 'node-0'), ...stepsFix(['distribute'])], 'distribute', 'node-0')).toBe(true);
    expect(fixRuns(labFix('start', 'node-1', 'x'), 'kubelet', 'node-1')).toBe(false);
    expect(fixRuns(null, 'kubelet', 'node-1')).toBe(false);
  });

  it('pods stuck on a missing sandbox image or CNI plugin: the drift first, the pod in its evidence', () => {
    const { ctx, evidence, api } = withDrift('node-0', [{ step: 'images', changes: [`${PAUSE_IMAGE} not in containerd (would run: ctr import)`] }], {
      podProblems: [stuck('web', 'node-0', 'creating', 'ContainerCreating')],
      podEvents: [{ namespace: 'default', pod: 'web', reason: 'FailedCreatePodSandBox', message: SANDBOX_EVENT }],
    });
    const findings = diagnose({ ...ctx, now: NOW, archived: [PAUSE_IMAGE] }, evidence, api);
    expect(findings.map((f) => [f.machine, f.check, f.fix])).toEqual([['node-0', 'drift', 'hardway images --node node-0']]);
    expect(findings[0]!.evidence).toContain('web on node-0: ContainerCreating; event FailedCreatePodSandBox: Failed to create pod sandbox');
  });

  it('known reasons without a drift: each a cause with its fix (CNI plugin, CNI config, sandbox image, image not cached and not mirrored)', () => {
    const { ctx, evidence, api } = withDrift('node-0', [], {
      podProblems: [
        stuck('a', 'node-0', 'creating', 'ContainerCreating'), stuck('b', 'node-1', 'creating', 'ContainerCreating'),
        stuck('c', 'node-1', 'creating', 'ContainerCreating'), stuck('d', 'node-0', 'image-pull', 'ImagePullBackOff: Back-off pulling image "nginx:stable"'),
      ],
      podEvents: [
        { namespace: 'default', pod: 'a', reason: 'FailedCreatePodSandBox', message: PLUGIN_EVENT },
        { namespace: 'default', pod: 'b', reason: 'FailedCreatePodSandBox', message: SANDBOX_EVENT },
        { namespace: 'default', pod: 'c', reason: 'NetworkNotReady', message: 'network is not ready: container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized; cni config uninitialized' },
      ],
    });
    const findings = diagnose({ ...ctx, now: NOW, archived: [] }, evidence, api);
    expect(findings.map((f) => [f.machine, f.check, f.fix])).toEqual([
      ['node-0', 'pods', 'hardway bootstrap-workers --only cni --node node-0'],
      ['node-0', 'pods', null],
      ['node-1', 'pods', 'hardway build-images && hardway images --node node-1'],
      ['node-1', 'pods', 'hardway bootstrap-workers --only cni --node node-1'],
    ]);
    expect(findings[0]!.cause).toBe('the CNI plugin bridge is missing on node-0: no new pod there gets a network (pod default/a stays ContainerCreating)');
    expect(findings[1]!.cause).toBe("nginx:stable is not in node-0's image cache and cluster.yaml has no mirror for docker.io: pod default/d cannot pull it");
    expect(findings[2]!.cause).toContain(`the sandbox (pause) image ${PAUSE_IMAGE} is not in node-1's containerd`);
    expect(findings[3]!.cause).toBe('no CNI config on node-1: no new pod there gets a network (pod default/c stays ContainerCreating)');
  });

  it('an image that does not pull where cluster.yaml has a _default mirror is not called unmirrored: the event is shown as it is', () => {
    const { ctx, evidence, api } = withDrift('node-0', [], {
      podProblems: [stuck('d', 'node-0', 'image-pull', 'ImagePullBackOff: Back-off pulling image "nginx:stable"')],
    });
    const inventory = { ...ctx.inventory, settings: { ...ctx.inventory.settings, registries: { _default: {} } as never } };
    const findings = diagnose({ ...ctx, inventory, now: NOW, archived: [] }, evidence, api);
    expect(findings.map((f) => [f.machine, f.check, f.fix])).toEqual([['node-0', 'pods', null]]);
    expect(findings[0]!.cause).not.toContain('no mirror');
    expect(findings[0]!.cause).toContain('pod default/d on node-0 cannot pull its image');
  });

  it('an unknown reason is shown in the event\'s words; a pod on a NotReady node goes into that node\'s finding; a young pod with no warning yet is no finding', () => {
    const r = recorded('healthy');
    const nodes = r.api.nodes.map((n) => (n.name === 'node-1' ? { ...n, ready: 'False', reason: 'KubeletNotReady' } : n));
    const { ctx, evidence, api } = withDrift('node-0', [], {
      nodes,
      podProblems: [
        stuck('crashy', 'node-0', 'crash-loop', 'CrashLoopBackOff after 4 restart(s); last exit: Error, exit 1'),
        stuck('young', 'node-0', 'creating', 'ContainerCreating', PENDING_TOO_LONG_S - 10),
        stuck('old', 'node-1', 'creating', 'ContainerCreating'),
      ],
      podEvents: [{ namespace: 'default', pod: 'crashy', reason: 'BackOff', message: 'Back-off restarting failed container' }],
    });
    const findings = diagnose({ ...ctx, now: NOW }, evidence, api);
    expect(findings.map((f) => [f.machine, f.check])).toEqual([['node-1', 'node'], ['node-0', 'pods']]);
    expect(findings[0]!.evidence).toContain('old on node-1: ContainerCreating');
    expect(findings[1]).toMatchObject({ fix: null, cause: 'pod default/crashy on node-0 crash-loops: BackOff: Back-off restarting failed container' });
  });
});
