// hardway doctor's judgement, on evidence recorded from a real lab (healthy, and after each
// `hardway lab break` scenario): the first finding is that scenario's cause on that machine, with
// the fix the scenario table promises; and edge cases made from the recorded evidence.
import { createPrivateKey, createPublicKey, X509Certificate } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { issueCertificate } from '../../src/certs/issue.ts';
import { parseNodesAndPods } from '../../src/doctor/api.ts';
import { parseJournals, parseTemplateBlocks } from '../../src/doctor/checks/machine.ts';
import { defaultTestImages, registryOf } from '../../src/doctor/context.ts';
import { diagnose } from '../../src/doctor/diagnose.ts';
import { doctorJson, doctorText } from '../../src/doctor/format.ts';
import { gatherMachine } from '../../src/doctor/gather.ts';
import { requestsFor } from '../../src/doctor/batch.ts';
import { SCENARIOS, scenarioFix, type Scenario } from '../../src/break/scenarios.ts';
import type { Transport } from '../../src/transport/types.ts';
import { DOCTOR_DNS_FIXTURES, DOCTOR_FIXTURES, recorded, recordedMachines } from './doctor.helpers.ts';

const KUBELET_CRT = '/var/lib/kubelet/kubelet.crt';
/**
 * The scenarios not recorded on a lab: the healthy recording with what the plan of the step the
 * scenario breaks says there (as src/doctor/drift.ts words it) and a pod stuck with the event
 * containerd 1.6 gives it.
 */
const MADE: Record<string, { step: 'images' | 'cni' | 'pod-forwarding'; change: string; event?: string; probes?: Record<string, string> }> = {
  'sandbox-image-missing': {
    step: 'images', change: 'localhost/hardway/pause:1 not in containerd (would run: /usr/local/bin/ctr -n k8s.io images import /var/lib/hardway/images/pause.tar)',
    event: 'Failed to create pod sandbox: rpc error: code = Unknown desc = failed to get sandbox image "localhost/hardway/pause:1": failed to pull image "localhost/hardway/pause:1"',
  },
  'cni-plugin-missing': {
    step: 'cni', change: '/opt/cni/bin/bridge: missing',
    event: 'Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network for sandbox "0a1b": failed to find plugin "bridge" in path [/opt/cni/bin]',
  },
  // Pods run and stay Ready: no event; the filter table as the scenario leaves it, and the plan of the step.
  'docker-forward': {
    step: 'pod-forwarding', change: 'FORWARD does not jump to HARDWAY-FORWARD (policy DROP): pod traffic is dropped by the policy (would run: iptables -w -I FORWARD 1 -j HARDWAY-FORWARD)',
    probes: {
      filter: '-P INPUT ACCEPT\n-P FORWARD DROP\n-P OUTPUT ACCEPT\n-N DOCKER-FORWARD\n-N DOCKER-USER\n-N HARDWAY-FORWARD\n-A FORWARD -j DOCKER-USER\n-A FORWARD -j DOCKER-FORWARD\n'
        + '-A HARDWAY-FORWARD -s 10.200.0.0/16 -j ACCEPT\n-A HARDWAY-FORWARD -d 10.200.0.0/16 -j ACCEPT\n',
    },
  },
};

/** Where recordings are: the cluster DNS scenarios were recorded on a lab that runs the add-on. */
const RECORDINGS = [DOCTOR_FIXTURES, DOCTOR_DNS_FIXTURES];
/** The directories that hold a recording of this scenario: one, unless its evidence is made (MADE). */
const recordingsOf = (scenario: string) => RECORDINGS.filter((dir) => existsSync(join(dir, `${scenario}.json`)));

/**
 * The machine a scenario's evidence is broken on: the one machine a trimmed recording kept (the one
 * it broke), else its labMachine (a whole recording, made on the lab broken as the e2e test breaks
 * it, and the evidence made here).
 */
function brokenIn(s: Scenario): string {
  const dir = recordingsOf(s.name)[0];
  const machines = dir ? recordedMachines(s.name, dir) : [];
  return machines.length === 1 ? machines[0]! : s.labMachine;
}

/** The evidence of a scenario: recorded, or made (MADE). */
function evidenceOf(s: Scenario) {
  const made = MADE[s.name];
  if (!made) return recorded(s.name, recordingsOf(s.name)[0]);
  const r = recorded('healthy');
  const node = brokenIn(s);
  const created = new Date(r.ctx.now - 60_000).toISOString();
  return {
    ctx: r.ctx,
    evidence: r.evidence.map((e) => (e.machine === node ? {
      ...e, drift: [{ step: made.step, changes: [made.change] }],
      probes: { ...e.probes, ...Object.fromEntries(Object.entries(made.probes ?? {}).map(([k, stdout]) => [k, { code: 0, stdout }])) },
    } : e)),
    api: made.event === undefined ? r.api : {
      ...r.api,
      podProblems: [{ name: 'web', namespace: 'default', node, labels: {}, trouble: 'creating' as const, why: 'ContainerCreating', created }],
      podEvents: [{ namespace: 'default', pod: 'web', reason: 'FailedCreatePodSandBox', message: made.event }],
    },
  };
}

describe('doctor on recorded evidence of a real 1+2 lab', () => {
  it('healthy: no finding, and says so', () => {
    const { ctx, evidence, api } = recorded('healthy');
    const findings = diagnose(ctx, evidence, api);
    expect(findings).toEqual([]);
    expect(doctorJson(findings)).toBe('{"ok":true,"findings":[]}');
    expect(doctorText(findings, { machines: 3, api, testImages: ctx.testImages, seconds: 0.8 })).toMatch(/node-0 Ready, node-1 Ready.*\nNo problems found\.$/);
  });

  it('the report wraps to the terminal: every line of every scenario within 80 and 60 columns, the same words as unwrapped (issue 36 point 6)', () => {
    for (const s of SCENARIOS) {
      const { ctx, evidence, api } = evidenceOf(s);
      const findings = diagnose(ctx, evidence, api);
      const facts = { machines: 3, api, testImages: ctx.testImages, seconds: 1.2 };
      const whole = doctorText(findings, facts);
      for (const width of [80, 60]) {
        const text = doctorText(findings, facts, width);
        // A word longer than the line (a long path) may stand alone; nothing else passes the width.
        for (const line of text.split('\n')) if (line.length > width) expect(line.lastIndexOf(' '), `${s.name}: ${line}`).toBeLessThan(width);
        expect(text.split(/\s+/), s.name).toEqual(whole.split(/\s+/));
      }
      expect(Math.max(...whole.split('\n').map((l) => l.length)), s.name).toBeGreaterThan(60);
    }
  });

  it('every scenario has its evidence: one recording (test/fixtures/doctor/ or doctor-dns/) or, never recorded, one made here; broken on a machine it can break', () => {
    const names = SCENARIOS.map((s) => s.name);
    const { inventory } = recorded('healthy').ctx;
    for (const s of SCENARIOS) {
      expect(recordingsOf(s.name).length + (s.name in MADE ? 1 : 0), `${s.name}: recordings and made evidence`).toBe(1);
      expect(s.roles, s.name).toContain(inventory.machines.find((m) => m.hostname === brokenIn(s))?.role);
    }
    // No evidence left of a scenario that is gone.
    for (const name of Object.keys(MADE)) expect(names).toContain(name);
    for (const dir of RECORDINGS) {
      for (const file of readdirSync(dir).filter((f) => f.endsWith('.json'))) expect(['healthy', ...names], `${dir}/${file}`).toContain(file.slice(0, -'.json'.length));
    }
  });

  for (const s of SCENARIOS) {
    it(`${s.name}: the first finding is ${s.doctor.check} on the broken machine, with the fix the scenario promises`, () => {
      const { ctx, evidence, api } = evidenceOf(s);
      const node = brokenIn(s);
      const [first, ...rest] = diagnose(ctx, evidence, api);
      expect(first).toMatchObject({ machine: node, check: s.doctor.check, fix: scenarioFix(s, node, ctx.lab!.name) });
      // Nothing on another machine: the fault is one machine's.
      expect(rest.filter((f) => f.machine !== node)).toEqual([]);
      expect(first!.evidence.length).toBeGreaterThan(10);
    });
  }

  it('a NotReady node is told in the evidence of the finding that explains it, not as a finding of its own', () => {
    const { ctx, evidence, api } = recorded('cni-config-missing');
    const findings = diagnose(ctx, evidence, api);
    expect(findings.map((f) => f.check)).toEqual(['cni']);
    expect(findings[0]!.evidence).toContain('kubectl get nodes: node-1 Ready=False (KubeletNotReady: runtime network not ready');
  });

  it('mirror-missing: the failed test pulls and the cached-image trap are in the hosts.toml finding', () => {
    const { ctx, evidence, api } = recorded('mirror-missing');
    const [f] = diagnose(ctx, evidence, api);
    expect(f!.cause).toContain('/etc/containerd/certs.d/localhost_5001_/hosts.toml is missing on node-1');
    expect(f!.evidence).toContain('ctr content fetch-object --hosts-dir /etc/containerd/certs.d localhost:5001/hardway/web:1: ctr: failed to do request');
    expect(f!.evidence).toContain("localhost:5001/hardway/web:1 is in node-1's image cache");
  });

  it('a test pull that fails with hosts.toml right is a pull finding without a hardway fix', () => {
    const { ctx, evidence, api } = recorded('healthy');
    evidence[1]!.probes['pull localhost:5001/hardway/web:1'] = { code: 1, stdout: 'ctr: dial tcp 10.240.100.5:5000: connect: connection refused\n' };
    const findings = diagnose(ctx, evidence, api);
    expect(findings).toEqual([expect.objectContaining({ machine: 'node-0', check: 'pull', fix: null })]);
    // In a lab whose registry machine is stopped, starting it is the fix.
    const stopped = { ...ctx.lab!, running: ctx.lab!.running.filter((m) => m !== 'registry') };
    expect(diagnose({ ...ctx, lab: stopped }, evidence, api)[0]).toMatchObject({ check: 'pull', fix: 'hardway lab start registry --name e2e-doc' });
  });

  it('worker-down on real machines: no hardway command brings a machine back; a running lab machine is rebooted', () => {
    const { ctx, evidence, api } = recorded('worker-down');
    expect(diagnose({ ...ctx, lab: undefined }, evidence, api)[0]).toMatchObject({ machine: 'node-1', check: 'ssh', fix: null });
    expect(diagnose({ ...ctx, lab: { ...ctx.lab!, running: ['server', 'node-0', 'node-1'] } }, evidence, api)[0]!.fix).toBe('hardway lab reboot node-1 --name e2e-doc');
  });

  it('containerd stopped: one finding for containerd and the kubelet that stopped with it', () => {
    const { ctx, evidence, api } = recorded('containerd-stopped');
    const findings = diagnose(ctx, evidence, api);
    expect(findings).toHaveLength(1);
    expect(findings[0]!.cause).toBe('containerd is inactive on node-0, and the kubelet, whose unit requires it, stopped with it');
  });

  it('the API unreachable: one api finding on the control plane, no node guessed at', () => {
    const { ctx, evidence, api } = recorded('healthy');
    const findings = diagnose(ctx, evidence, { ...api, error: 'The connection to the server 10.240.100.10:6443 was refused', nodes: [] });
    expect(findings).toEqual([expect.objectContaining({ machine: 'server', check: 'api', fix: null })]);
  });

  it('a node NotReady with no cause on its machine is a node finding, last', () => {
    const { ctx, evidence, api } = recorded('healthy');
    api.nodes[1]!.ready = 'False';
    evidence[2]!.probes.routes = { code: 0, stdout: 'default via 10.240.100.1 dev host0\n' };
    expect(diagnose(ctx, evidence, api).map((f) => `${f.machine} ${f.check}`)).toEqual(['node-1 routes', 'node-1 node']);
  });

  it('findings come most likely first: by check, then by the machine order of machines.txt', () => {
    const { ctx, evidence, api } = recorded('healthy');
    evidence[2]!.probes.sysctls = { code: 0, stdout: 'net.bridge.bridge-nf-call-iptables 0\nnet.bridge.bridge-nf-call-ip6tables 1\nnet.ipv4.ip_forward 0\n' };
    evidence[1]!.files['/etc/cni/net.d/10-bridge.conf'] = null;
    evidence[1]!.files['/etc/cni/net.d/99-loopback.conf'] = null;
    evidence[0]!.probes.services!.stdout = evidence[0]!.probes.services!.stdout.replace(/(Id=kube-scheduler.service\n(?:.*\n)*?)ActiveState=active/, '$1ActiveState=failed');
    expect(diagnose(ctx, evidence, api).map((f) => `${f.machine} ${f.check} ${f.fix}`)).toEqual([
      'server control-plane hardway bootstrap-control-plane --node server',
      'node-0 cni hardway bootstrap-workers --only cni --node node-0',
      'node-1 netfilter hardway bootstrap-workers --only worker-os --node node-1',
      'node-1 ip-forward hardway bootstrap-workers --only worker-os --node node-1',
    ]);
  });

  it('names that resolve but a template that lost the block: the next boot breaks them, pin-hosts fixes it now', () => {
    const { ctx, evidence, api } = recorded('healthy');
    evidence[0]!.probes.templates!.stdout = '== hosts.debian.tmpl\n== hosts.redhat.tmpl\n';
    const [f] = diagnose(ctx, evidence, api);
    expect(f).toMatchObject({ machine: 'server', check: 'names', fix: 'hardway pin-hosts --node server' });
    expect(f!.cause).toMatch(/^names resolve on server now, but cloud-init's hosts template \(hosts\.debian\.tmpl\) no longer has hardway's block/);
  });

  it('a CNI config with another pod subnet than machines.txt is named as such', () => {
    const { ctx, evidence, api } = recorded('healthy');
    const conf = evidence[2]!.files['/etc/cni/net.d/10-bridge.conf']!;
    evidence[2]!.files['/etc/cni/net.d/10-bridge.conf'] = conf.replace('10.200.1.0/24', '10.200.9.0/24');
    expect(diagnose(ctx, evidence, api)[0]).toMatchObject({ machine: 'node-1', check: 'pod-subnet', fix: 'hardway bootstrap-workers --only cni --node node-1' });
  });

  it('a node registered with another pod CIDR: named, with no hardway fix (the API never changes it)', () => {
    const { ctx, evidence, api } = recorded('healthy');
    api.nodes[0]!.podCidr = '10.200.7.0/24';
    const [f] = diagnose(ctx, evidence, api);
    expect(f).toMatchObject({ machine: 'node-0', check: 'pod-subnet', fix: null });
    expect(f!.cause).toContain('kubectl delete node node-0');
  });
});

describe('doctor: a port taken by another program', () => {
  const listening = (program: string) => ({ code: 0, stdout: `LISTEN 0 4096 *:10250 *:* users:(("${program}",pid=812,fd=3))\n` });
  const kubeletFailed = (stdout: string) => stdout.replace(/(Id=kubelet.service\n(?:.*\n)*?)ActiveState=active/, '$1ActiveState=failed');

  it("the kubelet down because another program holds 10250: that program is named first, the kubelet's state in its evidence, no hardway fix", () => {
    const { ctx, evidence, api } = recorded('healthy');
    evidence[1]!.probes.services!.stdout = kubeletFailed(evidence[1]!.probes.services!.stdout);
    evidence[1]!.probes.listening = listening('nginx');
    const findings = diagnose(ctx, evidence, api);
    expect(findings.map((f) => `${f.machine} ${f.check}`)).toEqual(['node-0 ports']);
    expect(findings[0]).toMatchObject({ fix: null, cause: 'port 10250 on node-0, where kubelet listens, is held by nginx: kubelet cannot start (failed); stop that program or move it to another port' });
    expect(findings[0]!.evidence).toBe('ss -Hltnp: port 10250 held by nginx; systemctl show kubelet: ActiveState=failed');
  });

  it('the kubelet holding its own port, or active beside another listener, or no ss: no ports finding', () => {
    const { ctx, evidence, api } = recorded('healthy');
    evidence[1]!.probes.listening = listening('kubelet');
    expect(diagnose(ctx, evidence, api)).toEqual([]);
    evidence[1]!.probes.listening = listening('nginx');
    expect(diagnose(ctx, evidence, api)).toEqual([]);
    evidence[1]!.probes.services!.stdout = kubeletFailed(evidence[1]!.probes.services!.stdout);
    evidence[1]!.probes.listening = { code: 0, stdout: 'ss-missing\n' };
    expect(diagnose(ctx, evidence, api).map((f) => f.check)).toEqual(['kubelet']);
  });
});

describe('doctor: certificates judged on the machine\'s own clock', () => {
  it('not yet valid when the machine\'s clock is behind its notBefore', () => {
    const { ctx, evidence, api } = recorded('healthy');
    evidence[1]!.probes.clock = { code: 0, stdout: '946684800\n' }; // 2000-01-01
    const findings = diagnose(ctx, evidence, api);
    expect(findings[0]).toMatchObject({ machine: 'node-0', check: 'certificates' });
    expect(findings[0]!.cause).toMatch(/is not valid until .* \(is the machine's clock behind\?\)/);
    // pki/ holds the same certificates: the clock is wrong, not the files, and up would not help either; still one command is named.
    expect(findings.every((f) => f.machine === 'node-0')).toBe(true);
  });

  it('signed by another CA: named, and distribute sends the right one from pki/', () => {
    const { ctx, evidence, api } = recorded('healthy');
    const key = (f: string) => createPrivateKey(readFileSync(join(import.meta.dirname, '../fixtures/keys', f), 'utf8'));
    // Valid on the recorded machine clock: only the CA is wrong.
    const issued = { now: new Date(Number(evidence[1]!.probes.clock!.stdout) * 1000 - 86_400_000), validityDays: 10 };
    const otherCa = issueCertificate({ subject: { CN: 'CA' }, sans: [], usages: [], ca: true }, createPublicKey(key('ca-ec.key')), { selfKey: key('ca-ec.key') }, issued);
    evidence[1]!.files[KUBELET_CRT] = issueCertificate({ subject: { CN: 'system:node:node-0', O: 'system:nodes' }, sans: ['DNS:node-0'], usages: ['serverAuth'], ca: false },
      createPublicKey(key('leaf-ec.key')), { certificatePem: otherCa, privateKey: key('ca-ec.key') }, issued);
    const [f] = diagnose(ctx, evidence, api);
    expect(f).toMatchObject({ machine: 'node-0', check: 'certificates', fix: 'hardway distribute --node node-0' });
    expect(f!.cause).toBe("the kubelet's serving certificate on node-0 is not signed by the cluster CA (pki/ca.crt)");
  });

  it('a certificate inside renewBeforeDays (or expired) in pki/ too: renew that identity, then distribute', () => {
    const { ctx, evidence, api } = recorded('healthy');
    const notAfter = Date.parse(new X509Certificate(ctx.pki['pki/machines/node-0/kubelet.crt']!).validTo);
    // node-0's clock 5 days before its kubelet certificate ends: inside the default 30-day window.
    evidence[1]!.probes.clock = { code: 0, stdout: `${Math.floor((notAfter - 5 * 86_400_000) / 1000)}\n` };
    const findings = diagnose(ctx, evidence, api);
    const kubelet = findings.find((f) => f.cause.startsWith("the kubelet's serving certificate on node-0"));
    expect(kubelet).toMatchObject({ machine: 'node-0', check: 'certificates', fix: 'hardway certs --renew node-0/kubelet && hardway distribute' });
    expect(kubelet!.cause).toMatch(/ expires in [45] days \(renewBeforeDays: 30\)$/);
    expect(findings.find((f) => f.cause.startsWith("the kube-proxy's client certificate"))!.fix).toBe('hardway certs --renew kube-proxy && hardway distribute');
    expect(findings.every((f) => f.machine === 'node-0')).toBe(true);
    // Expired: the same fix.
    evidence[1]!.probes.clock = { code: 0, stdout: `${Math.floor((notAfter + 86_400_000) / 1000)}\n` };
    const expired = diagnose(ctx, evidence, api).find((f) => f.cause.startsWith("the kubelet's serving certificate on node-0"));
    expect(expired!.cause).toMatch(/ expired on /);
    expect(expired!.fix).toBe('hardway certs --renew node-0/kubelet && hardway distribute');
  });

  it('a kubelet certificate without the node\'s name (the API server dials the kubelet by it)', () => {
    const { ctx, evidence, api } = recorded('healthy');
    evidence[1]!.files[KUBELET_CRT] = ctx.pki['pki/machines/node-1/kubelet.crt']!;
    const [f] = diagnose(ctx, evidence, api);
    expect(f!.cause).toBe("the kubelet's serving certificate on node-0 does not name node-0, the name its peers dial");
    expect(f!.fix).toBe('hardway distribute --node node-0');
  });
});

describe('doctor: parsing and reading', () => {
  it('parses kubectl get nodes,pods,deployments,events -o json: Ready condition, pod CIDR, images per node, pods that do not run, their last warning event, the CoreDNS Deployment and its running pods', () => {
    const json = JSON.stringify({ items: [
      { kind: 'Node', metadata: { name: 'node-0' }, spec: { podCIDR: '10.200.0.0/24' }, status: { conditions: [{ type: 'Ready', status: 'False', reason: 'KubeletNotReady', message: 'x' }] } },
      { kind: 'Node', metadata: { name: 'node-1' }, spec: {}, status: {} },
      { kind: 'Pod', metadata: { name: 'p' }, spec: { nodeName: 'node-0', containers: [{ image: 'localhost:5001/hardway/web:1' }] } },
      { kind: 'Pod', metadata: { name: 'pending' }, spec: { containers: [{ image: 'nginx' }] }, status: { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message: '0/2 nodes are available' }] } },
      { kind: 'Pod', metadata: { name: 'coredns-a', namespace: 'kube-system', labels: { 'k8s-app': 'kube-dns' } }, spec: { nodeName: 'node-1', containers: [{ image: 'coredns' }] }, status: { phase: 'Running', podIP: '10.200.1.5', conditions: [{ type: 'Ready', status: 'True' }] } },
      // Running too, but not reachable on its port: one being replaced (its sandbox going away), one not Ready (a crash loop).
      { kind: 'Pod', metadata: { name: 'coredns-old', namespace: 'kube-system', labels: { 'k8s-app': 'kube-dns' }, deletionTimestamp: '2026-12-02T10:02:00Z' }, spec: { nodeName: 'node-1', containers: [{ image: 'coredns' }] }, status: { phase: 'Running', podIP: '10.200.1.4', conditions: [{ type: 'Ready', status: 'True' }] } },
      { kind: 'Pod', metadata: { name: 'coredns-loop', namespace: 'kube-system', labels: { 'k8s-app': 'kube-dns' } }, spec: { nodeName: 'node-1', containers: [{ image: 'coredns' }] }, status: { phase: 'Running', podIP: '10.200.1.3', conditions: [{ type: 'Ready', status: 'False' }] } },
      { kind: 'Deployment', metadata: { name: 'coredns', namespace: 'kube-system' }, spec: { replicas: 2 }, status: { readyReplicas: 1 } },
      { kind: 'Deployment', metadata: { name: 'coredns', namespace: 'default' }, spec: { replicas: 5 }, status: {} },
      { kind: 'Event', metadata: { name: 'e1' }, involvedObject: { kind: 'Pod', name: 'pending', namespace: 'default' }, type: 'Warning', reason: 'FailedScheduling', message: 'older', lastTimestamp: '2026-12-02T10:00:00Z' },
      { kind: 'Event', metadata: { name: 'e2' }, involvedObject: { kind: 'Pod', name: 'pending', namespace: 'default' }, type: 'Warning', reason: 'FailedScheduling', message: 'newer', lastTimestamp: '2026-12-02T10:01:00Z' },
      { kind: 'Event', metadata: { name: 'e3' }, involvedObject: { kind: 'Pod', name: 'p', namespace: 'default' }, type: 'Normal', reason: 'Pulled', message: 'ok' },
    ] });
    expect(parseNodesAndPods(json)).toEqual({
      nodes: [{ name: 'node-0', ready: 'False', reason: 'KubeletNotReady', message: 'x', podCidr: '10.200.0.0/24' }, { name: 'node-1', ready: '' }],
      podImages: [{ node: 'node-0', image: 'localhost:5001/hardway/web:1' }, ...['coredns-a', 'coredns-old', 'coredns-loop'].map(() => ({ node: 'node-1', image: 'coredns' }))],
      podProblems: [{ name: 'pending', namespace: 'default', node: '', labels: {}, trouble: 'pending', why: 'Unschedulable: 0/2 nodes are available' }],
      podEvents: [{ namespace: 'default', pod: 'pending', reason: 'FailedScheduling', message: 'newer' }],
      dnsDeployment: { replicas: 2, ready: 1 },
      // The cluster DNS pods that are Ready and not being deleted, with their address: what the function checks reach.
      dnsPods: [{ name: 'coredns-a', node: 'node-1', ip: '10.200.1.5' }],
    });
  });

  it('parses the journal and template sections of the probes', () => {
    expect(parseJournals('== kubelet\nline 1\n\nline 2\n== etcd\n')).toEqual(new Map([['kubelet', ['line 1', 'line 2']], ['etcd', []]]));
    expect(parseTemplateBlocks('== hosts.debian.tmpl\n# BEGIN x\n1 a a\n# END x\n== hosts.suse.tmpl\n')).toEqual(new Map([['hosts.debian.tmpl', '# BEGIN x\n1 a a\n# END x\n'], ['hosts.suse.tmpl', '']]));
  });

  it('test-pulls, in a lab with a registry, the images lab up pushed into it (images/ may hold more since), or those pods run from a mirrored registry', () => {
    const { ctx, api } = recorded('healthy');
    const lab = { name: 'e2e-doc', running: [], registry: true, registryImages: ['localhost:5001/hardway/pause:1', 'localhost:5001/hardway/web:1'] };
    expect(defaultTestImages(ctx.inventory, { ...api, podImages: [] }, lab)).toEqual(lab.registryImages);
    expect(defaultTestImages(ctx.inventory, { ...api, podImages: [{ node: 'node-0', image: 'localhost:5001/hardway/web:1' }, { node: 'node-0', image: 'localhost/hardway/coredns:1.8.3' }] }, lab))
      .toEqual(['localhost:5001/hardway/web:1']);
    expect(defaultTestImages(ctx.inventory, { ...api, podImages: [] }, undefined)).toEqual([]);
  });

  it('knows the registry of an image name as containerd does', () => {
    expect(['nginx', 'library/nginx:1', 'localhost:5001/hardway/web:1', 'localhost/hardway/pause:1', 'quay.io/x/y'].map(registryOf))
      .toEqual(['docker.io', 'docker.io', 'localhost:5001', 'localhost', 'quay.io']);
  });

  it('asks each machine in one facts batch that never writes the SHA cache, and reads no key or kubeconfig whole', async () => {
    const { ctx } = recorded('healthy');
    const inv = ctx.inventory;
    const sent: string[] = [];
    const fake: Transport = {
      machine: 'node-0',
      async exec(cmd, opts) {
        sent.push(cmd.text + '\n--stdin--\n' + String(opts?.stdin ?? ''));
        return { code: 0, stdout: '', stderr: 'short' };
      },
      upload: async () => { throw new Error('doctor must not upload'); },
      close: async () => undefined,
    };
    const node0 = inv.machines[1]!;
    const ev = await gatherMachine(node0, [requestsFor(inv, node0, Object.keys(ctx.rendered['node-0']!))], async () => fake);
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatch(/write=; /);
    expect(sent[0]).not.toMatch(/write=1/);
    expect(sent[0]).not.toMatch(/^R \/var\/lib\/kubelet\/(kubeconfig|kubelet\.key)$/m);
    // A batch that fails is evidence, not an exception.
    expect(ev.unreachable?.kind).toBe('facts');
  });
});

