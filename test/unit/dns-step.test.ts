// The dns step plans from the live objects on a fake control plane: a fresh cluster gets every
// object in one apply, a converged one nothing; only what differs is applied again; a Service at
// another address is made anew; dns.enabled: false removes hardway's objects; a crash-looping
// CoreDNS pod is replaced. Each plan only reads (the fake refuses anything else while planning).
import { beforeAll, describe, expect, it } from 'vitest';
import { applyChange, describeChange } from '../../src/engine/apply.ts';
import { withoutApiWrites } from '../../src/engine/hosts.ts';
import type { Change } from '../../src/engine/types.ts';
import type { Inventory } from '../../src/inventory.ts';
import { dnsStep } from '../../src/steps/dns.ts';
import { debianMachine } from '../fixtures/debian-machine.ts';
import { FakeMachineError } from '../fixtures/fake-transport.ts';
import { rolloutDone } from '../../src/probes/kubectl.ts';
import { planOn, project } from './step-plans.helpers.ts';
import { stepOptions } from './engine.helpers.ts';

const running = (t: ReturnType<typeof debianMachine>) => t.state.units.set('kube-apiserver', { enabled: 'enabled', active: 'active' });
/** The plan's lines as the kubectl route makes them (no direct route to the API). */
const viaKubectl = (plan: Change[]) => withoutApiWrites(plan).map(describeChange);
const stdinOf = (c: Change) => (c.kind === 'exec' ? String(c.stdin ?? '') : '');

describe('dns step', () => {
  let inv: Inventory;
  beforeAll(async () => {
    inv = await project();
  });
  const server = () => inv.machines.find((m) => m.hostname === 'server')!;
  const converged = async () => {
    const t = debianMachine('server');
    running(t);
    for (const c of await planOn(dnsStep, inv, server(), t)) await applyChange(t, c);
    return t;
  };

  it('runs on the first control plane only', () => {
    expect(dnsStep.targets(inv, stepOptions()).map((m) => m.hostname)).toEqual(['server']);
  });

  it('fresh cluster: one apply of all six objects; applied, the plan is empty', async () => {
    const t = debianMachine('server');
    running(t);
    const plan = await planOn(dnsStep, inv, server(), t);
    expect(viaKubectl(plan)).toEqual([expect.stringMatching(/^run: kubectl .* apply -f -/)]);
    // With the direct route: one server-side apply of the same six objects.
    expect(plan.map(describeChange)).toEqual([expect.stringMatching(/^api: apply serviceaccount\/coredns, clusterrole\/system:coredns, clusterrolebinding\/system:coredns, configmap\/coredns, deployment\/coredns, service\/kube-dns \(/)]);
    expect(plan[0]!.reason).toContain('serviceaccount/coredns, clusterrole/system:coredns, clusterrolebinding/system:coredns, configmap/coredns, deployment/coredns, service/kube-dns missing or different');
    const docs = stdinOf(plan[0]!);
    expect(docs).toContain('clusterIP: 10.32.0.10');
    expect(docs).toContain('forward . /etc/resolv.conf');
    for (const c of plan) await applyChange(t, c);
    expect(await planOn(dnsStep, inv, server(), t)).toEqual([]);
  });

  it('a changed Corefile or a Deployment scaled to zero: applies only that object', async () => {
    const t = await converged();
    t.state.objects.get('configmap/coredns')!.data.Corefile = '.:53 {\n    forward . 8.8.8.8\n}\n';
    t.state.objects.get('deployment/coredns')!.spec.replicas = 0;
    const plan = await planOn(dnsStep, inv, server(), t);
    expect(plan).toHaveLength(1);
    expect(plan[0]!.reason).toBe('configmap/coredns, deployment/coredns missing or different');
    const docs = stdinOf(plan[0]!);
    expect(docs).toContain('kind: ConfigMap');
    expect(docs).toContain('kind: Deployment');
    expect(docs).not.toContain('kind: Service\n');
  });

  it('a kube-dns Service at another address is deleted and made anew (its address cannot change in place)', async () => {
    const t = await converged();
    t.state.objects.get('service/kube-dns')!.spec.clusterIP = '10.32.0.99';
    const plan = await planOn(dnsStep, inv, server(), t);
    expect(viaKubectl(plan)).toEqual([expect.stringMatching(/delete service kube-dns -n kube-system/), expect.stringMatching(/apply -f -/)]);
    expect(plan[0]!.reason).toContain('has address 10.32.0.99, want 10.32.0.10');
    expect(stdinOf(plan[1]!)).toContain('kind: Service');
    for (const c of plan) await applyChange(t, c);
    expect(await planOn(dnsStep, inv, server(), t)).toEqual([]);
  });

  it('a CoreDNS pod that crash-loops is replaced (it keeps the resolver file it started with); a healthy rerun reads no pods', async () => {
    const t = await converged();
    const deployment = t.state.objects.get('deployment/coredns')!;
    deployment.status.readyReplicas = 1;
    t.state.dnsPods = [
      { metadata: { name: 'coredns-a', namespace: 'kube-system' }, spec: { nodeName: 'node-0' }, status: { phase: 'Running', containerStatuses: [{ name: 'coredns', ready: true, restartCount: 0, state: { running: {} } }] } },
      { metadata: { name: 'coredns-b', namespace: 'kube-system' }, spec: { nodeName: 'node-1' }, status: { phase: 'Running', containerStatuses: [{
        name: 'coredns', ready: false, restartCount: 4, state: { waiting: { reason: 'CrashLoopBackOff' } },
        lastState: { terminated: { reason: 'Error', exitCode: 1, message: '[FATAL] plugin/loop: Loop (127.0.0.1:46512 -> :53) detected for zone ".", see https://coredns.io/plugins/loop#troubleshooting. Query: "HINFO 1.2. "' } } }] } },
    ];
    const plan = await planOn(dnsStep, inv, server(), t);
    expect(viaKubectl(plan)).toEqual([expect.stringMatching(/delete pod coredns-b -n kube-system --wait=false /)]);
    expect(plan[0]!.reason).toMatch(/coredns-b on node-1 crash-loops \(CrashLoopBackOff after 4 restart\(s\); last exit: Error, exit 1, \[FATAL\] plugin\/loop: Loop/);
    deployment.status.readyReplicas = 2;
    const before = t.commands.length;
    expect(await planOn(dnsStep, inv, server(), t)).toEqual([]);
    expect(t.commands.slice(before).some((c) => c.includes('get pods'))).toBe(false);
  });

  it('a CoreDNS pod between two crashes (running again, not ready, its last run an error) is replaced; one started again after its node rebooted is not', async () => {
    const t = await converged();
    t.state.objects.get('deployment/coredns')!.status.readyReplicas = 0;
    const restarted = (name: string, node: string, last: Record<string, unknown>) => ({ metadata: { name, namespace: 'kube-system' }, spec: { nodeName: node },
      status: { phase: 'Running', containerStatuses: [{ name: 'coredns', ready: false, restartCount: 2, state: { running: {} }, lastState: { terminated: last } }] } });
    t.state.dnsPods = [
      restarted('coredns-a', 'node-0', { reason: 'Unknown', exitCode: 255 }),
      restarted('coredns-b', 'node-1', { reason: 'Error', exitCode: 1, message: '[FATAL] plugin/loop: Loop (127.0.0.1:46512 -> :53) detected for zone "."' }),
    ];
    const plan = await planOn(dnsStep, inv, server(), t);
    expect(viaKubectl(plan)).toEqual([expect.stringMatching(/delete pod coredns-b -n kube-system --wait=false /)]);
    expect(plan[0]!.reason).toMatch(/coredns-b on node-1 crash-loops \(running again, not ready, after 2 restart\(s\); last exit: Error, exit 1, \[FATAL\] plugin\/loop: Loop/);
  });

  it('dns.enabled: false removes the objects hardway made (and only those), then plans nothing', async () => {
    const t = await converged();
    t.state.objects.get('clusterrole/system:coredns')!.metadata.labels['app.kubernetes.io/managed-by'] = 'someone-else';
    const off = { ...inv, settings: { ...inv.settings, dns: { enabled: false } } };
    const plan = await planOn(dnsStep, off, server(), t);
    expect(viaKubectl(plan)).toEqual([expect.stringMatching(/delete service\/kube-dns deployment\/coredns configmap\/coredns clusterrolebinding\/system:coredns serviceaccount\/coredns -n kube-system --ignore-not-found /)]);
    for (const c of plan) await applyChange(t, c);
    expect(await planOn(dnsStep, off, server(), t)).toEqual([]);
    expect([...t.state.objects.keys()]).toEqual(['clusterrole/system:coredns']);
  });

  describe('after applying, verify waits for the rollout', () => {
    const timedOut = () => ({ code: 1, stdout: 'error: timed out waiting for the condition\n', stderr: '' });
    const verifyOn = async (t: ReturnType<typeof debianMachine>, pods: Record<string, unknown>[], rollout: () => { code: number; stdout: string; stderr: string } = timedOut) => {
      t.answer(rolloutDone, (timeoutS, deployment, namespace) => {
        if (`${deployment} ${namespace} ${timeoutS}` !== 'coredns kube-system 60') throw new FakeMachineError(`asked the rollout of ${deployment} in ${namespace} for ${timeoutS}s`);
        return rollout();
      });
      t.state.dnsPods = pods;
      const lines: string[] = [];
      const log = { info: (l: string) => void lines.push(l), debug: () => undefined };
      const facts = (await import('../../src/engine/facts.ts')).createFacts(t);
      const run = dnsStep.verify!({ host: 'server', machine: server(), inventory: inv, facts, options: stepOptions(), log, applied: [{ kind: 'exec', cmd: { text: 'x' } as never, reason: 'r' }] });
      return { run, lines };
    };
    const pending = (why: string) => ({ metadata: { name: 'coredns-x', namespace: 'kube-system' }, spec: {}, status: { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message: why }] } });

    it('pods that wait for a Ready node are no failure of the add-on (verify waits for the nodes and DNS)', async () => {
      const { run, lines } = await verifyOn(debianMachine('server'), [pending("0/2 nodes are available: 2 node(s) had taint {node.kubernetes.io/not-ready: }, that the pod didn't tolerate.")]);
      await expect(run).resolves.toBeUndefined();
      expect(lines.join('\n')).toMatch(/^CoreDNS waits for a Ready node \(Unschedulable: 0\/2 nodes are available/);
    });

    it('pods still being made (a loaded host) are waited for once more, said in the log; no failure when they then roll out', async () => {
      const t = debianMachine('server');
      let asked = 0;
      // The first wait times out, the second sees the rollout done.
      const making = { metadata: { name: 'coredns-z', namespace: 'kube-system' }, spec: { nodeName: 'node-0' }, status: { phase: 'Pending', containerStatuses: [{ name: 'coredns', ready: false, restartCount: 0, state: { waiting: { reason: 'ContainerCreating' } } }] } };
      const { run, lines } = await verifyOn(t, [making], () => (++asked === 1 ? timedOut() : { code: 0, stdout: 'deployment "coredns" successfully rolled out\n', stderr: '' }));
      await expect(run).resolves.toBeUndefined();
      expect(asked).toBe(2);
      expect(lines.join('\n')).toMatch(/^CoreDNS is still starting after 60s \(coredns-z: ContainerCreating\): waiting up to 60s more$/);
    });

    it('a container whose one start failed in the runtime (StartError) is waited for once more; a second failed start is a failure', async () => {
      const startError = (restarts: number) => ({ metadata: { name: 'coredns-s', namespace: 'kube-system' }, spec: { nodeName: 'node-22' }, status: { phase: 'Running',
        containerStatuses: [{ name: 'coredns', ready: false, restartCount: restarts, state: { waiting: { reason: 'CrashLoopBackOff' } },
          lastState: { terminated: { reason: 'StartError', exitCode: 128, message: 'failed to create containerd task: ... cpuset.cpus: no such file or directory: unknown' } } }] } });
      let asked = 0;
      const once = await verifyOn(debianMachine('server'), [startError(1)], () => (++asked === 1 ? timedOut() : { code: 0, stdout: 'deployment "coredns" successfully rolled out\n', stderr: '' }));
      await expect(once.run).resolves.toBeUndefined();
      expect(asked).toBe(2);
      expect(once.lines.join('\n')).toMatch(/^CoreDNS is still starting after 60s \(coredns-s: CrashLoopBackOff after 1 restart\(s\); last exit: StartError, exit 128/);
      const twice = await verifyOn(debianMachine('server'), [startError(2)]);
      await expect(twice.run).rejects.toThrow(/CoreDNS did not become available within 60s: .*\n  - coredns-s on node-22: CrashLoopBackOff after 2 restart\(s\); last exit: StartError/);
    });

    it('any other reason fails, naming each pod and, for the offline image, what builds and loads it', async () => {
      const pulling = { metadata: { name: 'coredns-y', namespace: 'kube-system' }, spec: { nodeName: 'node-0' }, status: { phase: 'Pending', containerStatuses: [{ name: 'coredns', ready: false, restartCount: 0, state: { waiting: { reason: 'ErrImagePull', message: 'failed to pull localhost/hardway/coredns:1.8.3' } } }] } };
      const { run } = await verifyOn(debianMachine('server'), [pending('0/2 nodes are available: 2 Insufficient cpu.'), pulling]);
      await expect(run).rejects.toThrow(/CoreDNS did not become available within 60s: error: timed out waiting for the condition\n  - coredns-x on no node: Unschedulable: 0\/2 nodes are available: 2 Insufficient cpu\.\n  - coredns-y on node-0: ErrImagePull/);
    });
  });

  it('without a running API server: a dry run says it applies once the API answers; a real run names what to run first', async () => {
    const t = debianMachine('server');
    const dry = await planOn(dnsStep, inv, server(), t, stepOptions({ dryRun: true }));
    expect(dry.map((c) => c.reason)).toEqual(['CoreDNS and the kube-dns Service at 10.32.0.10: the API server is not running yet; applied once it answers']);
    await expect(planOn(dnsStep, inv, server(), t)).rejects.toThrow(/the API server is not running on server/);
  });
});
