// doctor's cluster DNS checks on evidence recorded from a real 1+2 lab running CoreDNS
// (test/fixtures/doctor-dns): healthy, after `lab break dns-loop` and `lab break dns-down`, and
// variants of them made by editing one fact: a kubelet's clusterDNS, a stub resolver that is
// hardway's own choice, the offline image missing on a node, the add-on turned off.
import { describe, expect, it } from 'vitest';
import { kubeletResolverFile, NOT_READY_GRACE_S, parseKubeletDns } from '../../src/doctor/checks/dns.ts';
import { diagnose, sortFindings } from '../../src/doctor/diagnose.ts';
import { KUBELET_DNS_PROBE } from '../../src/doctor/probes.ts';
import { WORKER } from '../../src/layout.ts';
import { podProblems } from '../../src/steps/support/pods.ts';
import { DOCTOR_DNS_FIXTURES, recorded } from './doctor.helpers.ts';

const dnsLab = (name: string) => recorded(name, DOCTOR_DNS_FIXTURES);
const worker = (evidence: ReturnType<typeof dnsLab>['evidence'], name: string) => evidence.find((e) => e.machine === name)!;

describe('doctor: cluster DNS', () => {
  it('healthy, with CoreDNS running: no finding', () => {
    const { ctx, evidence, api } = dnsLab('healthy');
    expect(api.dnsDeployment).toEqual({ replicas: 2, ready: 2 });
    expect(diagnose(ctx, evidence, api)).toEqual([]);
  });

  it('dns-loop: the kubelet handing pods a stub resolver is the cause; the looping CoreDNS pod is its evidence, not a finding of its own', () => {
    const { ctx, evidence, api } = dnsLab('dns-loop');
    const findings = diagnose(ctx, evidence, api);
    expect(findings.map((f) => `${f.machine} ${f.check}`)).toEqual(['node-1 kubelet-dns']);
    expect(findings[0]!.cause).toContain('hands pods /run/systemd/resolve/stub-resolv.conf, whose nameserver 127.0.0.53 is a stub resolver on the node itself');
    expect(findings[0]!.evidence).toMatch(/on node-1: CrashLoopBackOff after \d+ restart\(s\); last exit: Error, exit 1, .*\[FATAL\] plugin\/loop: Loop \(127\.0\.0\.1:\d+ -> :53\) detected/);
    expect(findings[0]!.fix).toBe('hardway up --only kubelet --only dns');
  });

  it('a looping CoreDNS pod whose node is fixed already: "hardway dns" replaces it', () => {
    const { ctx, evidence, api } = dnsLab('dns-loop');
    const node1 = worker(evidence, 'node-1');
    node1.probes[KUBELET_DNS_PROBE] = { code: 0, stdout: 'resolvConf=/etc/resolv.conf\nresolved=inactive\nnameserver 10.240.0.2\n' };
    const [f, ...rest] = diagnose(ctx, evidence, api);
    expect(rest).toEqual([]);
    expect(f).toMatchObject({ machine: 'node-1', check: 'dns', fix: 'hardway dns --node server' });
    expect(f!.cause).toMatch(/^CoreDNS pod \S+ on node-1 forwards to itself \(its loop plugin stopped it\)/);
  });

  it('a stub resolver that is the file hardway itself gives the kubelet: no hardway command fixes it, and the cause says what to do', () => {
    const { ctx, evidence, api } = dnsLab('dns-loop');
    worker(evidence, 'node-1').probes[KUBELET_DNS_PROBE] = { code: 0, stdout: 'resolvConf=/etc/resolv.conf\nresolved=inactive\nnameserver 127.0.0.1\n' };
    const [f] = diagnose(ctx, evidence, api);
    expect(f).toMatchObject({ machine: 'node-1', check: 'kubelet-dns', fix: null });
    expect(f!.cause).toContain('point /etc/resolv.conf at the network\'s resolvers (or run systemd-resolved');
  });

  it('dns-down: CoreDNS scaled to 0 is named on the control plane, fixed by "hardway dns"', () => {
    const { ctx, evidence, api } = dnsLab('dns-down');
    expect(diagnose(ctx, evidence, api)).toEqual([expect.objectContaining({ machine: 'server', check: 'dns', fix: 'hardway dns --node server' })]);
    const gone = { ...api, dnsDeployment: undefined };
    expect(diagnose(ctx, evidence, gone)[0]!.cause).toMatch(/^the CoreDNS Deployment kube-system\/coredns does not exist: nothing answers at 10\.32\.0\.10/);
  });

  it('a kubelet whose clusterDNS is not the kube-dns address', () => {
    const { ctx, evidence, api } = dnsLab('healthy');
    const node0 = worker(evidence, 'node-0');
    node0.files[WORKER.kubeletConfig] = node0.files[WORKER.kubeletConfig]!.replace('"10.32.0.10"', '"10.32.0.53"');
    expect(diagnose(ctx, evidence, api)).toEqual([expect.objectContaining({
      machine: 'node-0', check: 'kubelet-dns', fix: 'hardway bootstrap-workers --only kubelet --node node-0',
      cause: expect.stringContaining('gives pods 10.32.0.53 to ask for names, but the kube-dns Service is at 10.32.0.10'),
    })]);
  });

  it('a CoreDNS pod running but not ready: still starting within NOT_READY_GRACE_S (no finding), a fault after it', () => {
    const { ctx, evidence, api } = dnsLab('healthy');
    const since = (secondsAgo: number) => new Date(ctx.now - secondsAgo * 1000).toISOString();
    const unready = (secondsAgo: number) => ({ ...api, podProblems: [{ name: 'coredns-x', namespace: 'kube-system', node: 'node-1', labels: { 'k8s-app': 'kube-dns' },
      trouble: 'not-ready' as const, why: 'container coredns is not ready', notReadySince: since(secondsAgo) }] });
    expect(diagnose(ctx, evidence, unready(NOT_READY_GRACE_S - 20))).toEqual([]);
    expect(diagnose(ctx, evidence, unready(NOT_READY_GRACE_S + 20))).toEqual([expect.objectContaining({
      machine: 'node-1', check: 'dns', cause: expect.stringContaining('CoreDNS pod coredns-x on node-1 does not run (not-ready)') })]);
  });

  it("a CoreDNS pod not ready past the grace: its last warning event in the evidence, and listed after a cause with a fix on its node", () => {
    const { ctx, evidence, api } = dnsLab('healthy');
    const since = new Date(ctx.now - (NOT_READY_GRACE_S + 20) * 1000).toISOString();
    const sick = {
      ...api,
      podProblems: [{ name: 'coredns-x', namespace: 'kube-system', node: 'node-1', labels: { 'k8s-app': 'kube-dns' },
        trouble: 'not-ready' as const, why: 'container coredns is not ready', notReadySince: since }],
      podEvents: [{ namespace: 'kube-system', pod: 'coredns-x', reason: 'Unhealthy', message: 'Readiness probe failed: HTTP probe failed with statuscode: 503' }],
    };
    const found = diagnose(ctx, evidence, sick);
    expect(found).toEqual([expect.objectContaining({ machine: 'node-1', check: 'dns', fix: null,
      evidence: 'kubectl get pods,events -n kube-system: coredns-x on node-1: container coredns is not ready; event Unhealthy: Readiness probe failed: HTTP probe failed with statuscode: 503' })]);
    const cause = { machine: 'node-1', check: 'registry' as const, cause: 'the mirror file is missing', evidence: 'hosts.toml: missing', fix: 'hardway bootstrap-workers --only containerd --node node-1' };
    expect(sortFindings(ctx, [...found, cause]).map((f) => f.check)).toEqual(['registry', 'dns']);
    // A CoreDNS finding with a fix (the Deployment gone) is a cause: it keeps its place before the registry.
    const gone = diagnose(ctx, evidence, { ...api, dnsDeployment: undefined });
    expect(sortFindings(ctx, [cause, ...gone]).map((f) => f.check)).toEqual(['dns', 'registry']);
  });

  it('the add-on turned off (dns.enabled: false): no DNS finding at all', () => {
    const { ctx, evidence, api } = dnsLab('dns-down');
    ctx.inventory.settings.dns.enabled = false;
    expect(diagnose(ctx, evidence, api)).toEqual([]);
  });

  it('reads the probe and knows hardway\'s resolver rule', () => {
    expect(parseKubeletDns('resolvConf=/etc/resolv.conf\nresolved=active\nnameserver 127.0.0.53\nnameserver 10.0.0.2\n'))
      .toEqual({ file: '/etc/resolv.conf', resolved: true, nameservers: ['127.0.0.53', '10.0.0.2'] });
    expect(kubeletResolverFile(true)).toBe('/run/systemd/resolve/resolv.conf');
    expect(kubeletResolverFile(false)).toBe('/etc/resolv.conf');
  });
});

describe('pods that do not run, as the API says', () => {
  const pod = (name: string, status: object, spec: object = { nodeName: 'node-0' }) => ({ metadata: { name, namespace: 'kube-system' }, spec, status });
  it('tells crash loops (with the last words), image pulls, creation, scheduling and readiness apart; running and finished pods are fine', () => {
    const problems = podProblems([
      pod('ok', { phase: 'Running', containerStatuses: [{ name: 'c', ready: true, restartCount: 0, state: { running: {} } }] }),
      pod('done', { phase: 'Succeeded' }),
      pod('crash', { phase: 'Running', containerStatuses: [{ name: 'c', ready: false, restartCount: 3, state: { waiting: { reason: 'CrashLoopBackOff' } }, lastState: { terminated: { reason: 'Error', exitCode: 1, message: 'a\nplugin/forward: no nameservers found\n' } } }] }),
      pod('pull', { phase: 'Pending', containerStatuses: [{ name: 'c', ready: false, restartCount: 0, state: { waiting: { reason: 'ImagePullBackOff', message: 'Back-off pulling image "x"' } } }] }),
      pod('creating', { phase: 'Pending', containerStatuses: [{ name: 'c', ready: false, restartCount: 0, state: { waiting: { reason: 'ContainerCreating' } } }] }),
      pod('unscheduled', { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message: '0/2 nodes are available' }] }, {}),
      pod('unready', { phase: 'Running', conditions: [{ type: 'Ready', status: 'False', lastTransitionTime: '2026-12-04T10:00:00Z' }], containerStatuses: [{ name: 'c', ready: false, restartCount: 0, state: { running: {} } }] }),
    ]);
    expect(problems.find((p) => p.name === 'unready')!.notReadySince).toBe('2026-12-04T10:00:00Z');
    expect(problems.map((p) => [p.name, p.trouble, p.why])).toEqual([
      ['crash', 'crash-loop', 'CrashLoopBackOff after 3 restart(s); last exit: Error, exit 1, a / plugin/forward: no nameservers found'],
      ['pull', 'image-pull', 'ImagePullBackOff: Back-off pulling image "x"'],
      ['creating', 'creating', 'ContainerCreating'],
      ['unscheduled', 'pending', 'Unschedulable: 0/2 nodes are available'],
      ['unready', 'not-ready', 'container c is not ready'],
    ]);
  });
});
