// doctor's function checks over a recorded healthy 1+2 lab with the cluster DNS add-on, given the
// answers the function probes would bring: each failure is a symptom with its evidence and where to
// look next, and a cause found elsewhere comes first and takes the symptom into its evidence.
import { describe, expect, it } from 'vitest';
import { diagnose } from '../../src/doctor/diagnose.ts';
import type { MachineEvidence } from '../../src/doctor/types.ts';
import { dnsQuery } from '../../src/probes/function.ts';
import { DOCTOR_DNS_FIXTURES, recorded } from './doctor.helpers.ts';

const API_NAME = 'kubernetes.default.svc.cluster.local';
const PODS = [{ name: 'coredns-a', node: 'node-0', ip: '10.200.0.5' }, { name: 'coredns-b', node: 'node-1', ip: '10.200.1.7' }];

/** A DNS reply to doctor's query (its id 0x4877) as `od -An -tx1` prints it: `addresses` as A records, or `rcode` and none. */
function reply(addresses: string[], rcode = 0): string {
  const q = dnsQuery(API_NAME, 0x4877);
  const header = Buffer.from(q.subarray(0, 12));
  header[2] = 0x81;
  header[3] = 0x80 | rcode;
  header.writeUInt16BE(addresses.length, 6);
  const records = addresses.map((a) => Buffer.from([0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 30, 0, 4, ...a.split('.').map(Number)]));
  return [...Buffer.concat([header, q.subarray(12), ...records])].map((b) => b.toString(16).padStart(2, '0')).join(' ') + '\n';
}

/** The healthy recording, every worker answering every function probe as a working cluster does, then `change` applied to the evidence. */
function lab(change: (byMachine: Map<string, MachineEvidence>) => void = () => {}) {
  const r = recorded('healthy', DOCTOR_DNS_FIXTURES);
  r.ctx.dnsPods = PODS;
  const service = r.ctx.inventory.serviceIp;
  for (const e of r.evidence.filter((x) => x.machine.startsWith('node-'))) {
    const other = PODS.find((p) => p.node !== e.machine)!;
    e.probes['cluster dns'] = { code: 0, stdout: reply([service]) };
    e.probes['api service'] = { code: 0, stdout: `${service}:443 0 \n` };
    e.probes['pod reach'] = { code: 0, stdout: `${other.ip}:53 0 \n` };
  }
  change(new Map(r.evidence.map((e) => [e.machine, e])));
  return diagnose(r.ctx, r.evidence, r.api);
}

describe('doctor: what works, asked from every worker', () => {
  it('a working cluster: no finding', () => {
    expect(lab()).toEqual([]);
  });

  it('the cluster DNS answers nothing while every unit runs: the symptom, its evidence and where to look next, on the worker that asked', () => {
    const found = lab((m) => {
      m.get('node-0')!.probes['cluster dns'] = { code: 0, stdout: '' };
      m.get('node-1')!.probes['cluster dns'] = { code: 0, stdout: '' };
    });
    expect(found.map((f) => `${f.check} ${f.machine}`)).toEqual(['cluster-dns node-0', 'cluster-dns node-1']);
    expect(found[0]!.cause).toContain(`the cluster DNS does not answer ${API_NAME} with 10.32.0.1 on node-0 (no answer within 2 s)`);
    expect(found[0]!.cause).toContain('kubectl -n kube-system logs -l k8s-app=kube-dns');
    expect(found[0]!.evidence).toBe(`DNS query for ${API_NAME} sent to 10.32.0.10:53 from node-0: no answer within 2 s`);
    expect(found[0]!.fix).toBeNull();
  });

  it("asked from a pod's network (the machine runs a pod): the evidence says so; from a machine without a pod and without a route to the Service range, nothing could be asked and nothing is found", () => {
    const found = lab((m) => {
      m.get('node-0')!.probes['cluster dns'] = { code: 0, stdout: 'from cni-1234\n' };
      m.get('node-1')!.probes['cluster dns'] = { code: 0, stdout: 'from host\nbash: connect: Network is unreachable\nbash: line 1: /dev/udp/10.32.0.10/53: Network is unreachable\n' };
      m.get('node-1')!.probes['api service'] = { code: 0, stdout: 'from host\n10.32.0.1:443 1 Network is unreachable\n' };
    });
    expect(found.map((f) => `${f.check} ${f.machine}`)).toEqual(['cluster-dns node-0']);
    expect(found[0]!.evidence).toBe(`DNS query for ${API_NAME} sent to 10.32.0.10:53 from a pod's network on node-0 (cni-1234): no answer within 2 s`);
  });

  it('an answer without the API address (NXDOMAIN, another address) is a failure too, said as it came', () => {
    const found = lab((m) => {
      m.get('node-0')!.probes['cluster dns'] = { code: 0, stdout: reply([], 3) };
      m.get('node-1')!.probes['cluster dns'] = { code: 0, stdout: reply(['10.32.0.99']) };
    });
    expect(found.map((f) => f.evidence)).toEqual([
      `DNS query for ${API_NAME} sent to 10.32.0.10:53 from node-0: NXDOMAIN`,
      `DNS query for ${API_NAME} sent to 10.32.0.10:53 from node-1: answered 10.32.0.99`,
    ]);
  });

  it('pods on node-0 unreachable from node-1 and DNS failing there, with no cause found: the pod network first, on the node whose pods do not answer; the DNS failure goes into it', () => {
    const found = lab((m) => {
      m.get('node-1')!.probes['pod reach'] = { code: 0, stdout: '10.200.0.5:53 124 \n' };
      m.get('node-1')!.probes['cluster dns'] = { code: 0, stdout: '' };
    });
    expect(found.map((f) => `${f.check} ${f.machine}`)).toEqual(['pod-network node-0']);
    expect(found[0]!.cause).toContain('pods on node-0 do not answer from node-1');
    expect(found[0]!.cause).toContain('iptables -S FORWARD');
    expect(found[0]!.evidence).toBe(`TCP connect from node-1 to CoreDNS pod coredns-a at 10.200.0.5:53: no answer within 2 s; DNS query for ${API_NAME} sent to 10.32.0.10:53 from node-1: no answer within 2 s`);
  });

  it('a cause found (drift of pod-forwarding on node-0) comes first and explains the symptoms it causes', () => {
    const found = lab((m) => {
      m.get('node-0')!.drift = [{ step: 'pod-forwarding', changes: ['FORWARD does not jump to HARDWAY-FORWARD (policy DROP) (would run: iptables -w -I FORWARD 1 -j HARDWAY-FORWARD)'] }];
      m.get('node-1')!.probes['pod reach'] = { code: 0, stdout: '10.200.0.5:53 124 \n' };
      m.get('node-1')!.probes['cluster dns'] = { code: 0, stdout: '' };
    });
    expect(found.map((f) => `${f.check} ${f.machine}`)).toEqual(['drift node-0']);
    expect(found[0]!.fix).toBe('hardway bootstrap-workers --only pod-forwarding --node node-0');
    expect(found[0]!.evidence).toContain('TCP connect from node-1 to CoreDNS pod coredns-a at 10.200.0.5:53: no answer within 2 s');
    expect(found[0]!.evidence).toContain(`DNS query for ${API_NAME} sent to 10.32.0.10:53 from node-1`);
  });

  it("FORWARD's policy DROP on node-0 (Docker), hardway's jump gone: the forwarding check names it first with the fix, and the symptoms go into it", () => {
    const found = lab((m) => {
      m.get('node-0')!.probes.filter = { code: 0, stdout: '-P INPUT ACCEPT\n-P FORWARD DROP\n-P OUTPUT ACCEPT\n-N DOCKER-USER\n-A FORWARD -j DOCKER-USER\n' };
      m.get('node-1')!.probes.filter = { code: 0, stdout: '-P INPUT ACCEPT\n-P FORWARD ACCEPT\n-P OUTPUT ACCEPT\n-N HARDWAY-FORWARD\n-A FORWARD -j HARDWAY-FORWARD\n-A HARDWAY-FORWARD -s 10.200.0.0/16 -j ACCEPT\n-A HARDWAY-FORWARD -d 10.200.0.0/16 -j ACCEPT\n' };
      m.get('node-1')!.probes['pod reach'] = { code: 0, stdout: '10.200.0.5:53 124 \n' };
    });
    expect(found.map((f) => `${f.check} ${f.machine}`)).toEqual(['forwarding node-0']);
    expect(found[0]!.cause).toContain("FORWARD's policy is DROP");
    expect(found[0]!.fix).toBe('hardway bootstrap-workers --only pod-forwarding --node node-0');
    expect(found[0]!.evidence).toBe('iptables -S FORWARD: -P FORWARD DROP; TCP connect from node-1 to CoreDNS pod coredns-a at 10.200.0.5:53: no answer within 2 s');
  });

  it('the API Service address that does not answer: kube-proxy stopped there is the cause and comes first', () => {
    const alone = lab((m) => {
      m.get('node-0')!.probes['api service'] = { code: 0, stdout: '10.32.0.1:443 1 Connection refused\n' };
    });
    expect(alone.map((f) => `${f.check} ${f.machine}`)).toEqual(['api-service node-0']);
    expect(alone[0]!.evidence).toBe('TCP connect from node-0 to 10.32.0.1:443: Connection refused');
    const withCause = lab((m) => {
      const e = m.get('node-0')!;
      e.probes['api service'] = { code: 0, stdout: '10.32.0.1:443 1 Connection refused\n' };
      e.probes.services = { code: 0, stdout: e.probes.services!.stdout.replace(/(Id=kube-proxy\.service\n(?:[^\n]*\n)*?ActiveState=)active/, '$1inactive') };
    });
    expect(withCause.map((f) => `${f.check} ${f.machine}`)).toEqual(['kube-proxy node-0']);
    expect(withCause[0]!.evidence).toContain('TCP connect from node-0 to 10.32.0.1:443: Connection refused');
  });
});
