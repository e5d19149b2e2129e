// Issue 24, items 11, 12 and the input checks of 16: a worker may not take the kubernetes
// Service's names; an even number of control planes is refused with a hint unless cluster.yaml
// asks for it; CR-only line endings read as lines; a YAML alias and a number too large for a
// double are named as what they are.
import { describe, expect, it } from 'vitest';
import { parseClusterSettings } from '../../src/cluster-settings.ts';
import { clusterYaml as labClusterYaml } from '../../src/lab/outputs.ts';
import { clusterYaml as multipassClusterYaml } from '../../src/multipass/outputs.ts';
import { hardway, makeProject } from './certs.helpers.ts';
import { failedCleanly } from './safety.helpers.ts';

const SERVER = '10.240.0.10 server.kubernetes.local server';

describe('a worker may not take the API server\'s Service names (item 11)', () => {
  it.each([
    ['kubernetes.kubernetes.local kubernetes', '"kubernetes" is a name of the kubernetes Service'],
    ['kubernetes.default.svc kubernetes', '"kubernetes" is a name of the kubernetes Service'],
  ])('%s as a worker: exit 2 at its line', async (names, message) => {
    const p = makeProject({ machines: `${SERVER}\n10.240.0.20 ${names} 10.200.0.0/24\n` });
    const run = await hardway(p, 'inventory');
    failedCleanly(run, 2, `${p.machines}:2: ${message}, which means the API server, and this line is a worker`);
    expect(run.stderr).toContain('pin-hosts would make it mean the worker 10.240.0.20 on every machine');
  });

  it('the FQDN kubernetes.default.svc.<clusterDomain> too, and a control plane may still be called kubernetes', async () => {
    const fqdn = makeProject({ machines: `${SERVER}\n10.240.0.20 kubernetes.default.svc.example.internal kubernetes 10.200.0.0/24\n`, cluster: 'clusterDomain: example.internal\n' });
    failedCleanly(await hardway(fqdn, 'inventory'), 2, /machines\.txt:2: "kubernetes(\.default\.svc\.example\.internal)?" is a name of the kubernetes Service/);
    const server = makeProject({ machines: '10.240.0.10 kubernetes.example.com kubernetes\n10.240.0.20 node-0.example.com node-0 10.200.0.0/24\n' });
    expect((await hardway(server, 'inventory')).code).toBe(0);
  });
});

describe('no machine may take a name under svc.<clusterDomain> or the cluster domain itself (issue 34, item 9)', () => {
  it.each([
    ['10.240.0.20 kube-dns.kube-system.svc.cluster.local kube-dns 10.200.0.0/24', '"kube-dns.kube-system.svc.cluster.local" is under svc.cluster.local, where the cluster\'s Services have their names (clusterDomain cluster.local)'],
    ['10.240.0.20 web.default.svc.cluster.local web 10.200.0.0/24', '"web.default.svc.cluster.local" is under svc.cluster.local'],
    ['10.240.0.20 svc.cluster.local svc 10.200.0.0/24', '"svc.cluster.local" is under svc.cluster.local'],
    ['10.240.0.11 kube-dns.kube-system.svc.cluster.local kube-dns', '"kube-dns.kube-system.svc.cluster.local" is under svc.cluster.local'],
    ['10.240.0.20 cluster.local cluster 10.200.0.0/24', '"cluster.local" is the cluster\'s DNS domain (clusterDomain cluster.local)'],
  ])('%s: exit 2 at its line', async (line, message) => {
    const p = makeProject({ machines: `${SERVER}\n${line}\n10.240.0.12 server-2.kubernetes.local server-2\n`, cluster: 'evenControlPlanes: true\n' });
    const run = await hardway(p, 'inventory');
    failedCleanly(run, 2, `${p.machines}:2: ${message}`);
    expect(run.stderr).toContain('give this machine a name outside cluster.local');
  });

  it('follows clusterDomain: under svc.example.internal refused, and the same name under cluster.local then allowed', async () => {
    const refused = makeProject({ machines: `${SERVER}\n10.240.0.20 metrics.monitoring.svc.example.internal metrics 10.200.0.0/24\n`, cluster: 'clusterDomain: example.internal\n' });
    failedCleanly(await hardway(refused, 'inventory'), 2, `${refused.machines}:2: "metrics.monitoring.svc.example.internal" is under svc.example.internal`);
    const domain = makeProject({ machines: `${SERVER}\n10.240.0.20 example.internal example 10.200.0.0/24\n`, cluster: 'clusterDomain: example.internal\n' });
    failedCleanly(await hardway(domain, 'inventory'), 2, `${domain.machines}:2: "example.internal" is the cluster's DNS domain (clusterDomain example.internal)`);
    const allowed = makeProject({ machines: `${SERVER}\n10.240.0.20 metrics.monitoring.svc.cluster.local metrics 10.200.0.0/24\n`, cluster: 'clusterDomain: example.internal\n' });
    expect((await hardway(allowed, 'inventory')).code).toBe(0);
  });

  it('a name under the domain but not under svc. (node-0.mysvc.cluster.local) is a name like any other', async () => {
    const p = makeProject({ machines: `${SERVER}\n10.240.0.20 node-0.mysvc.cluster.local node-0 10.200.0.0/24\n` });
    expect((await hardway(p, 'inventory')).code).toBe(0);
  });
});

describe('an even number of control-plane machines (item 12)', () => {
  it('a worker line without its pod subnet: refused at that line, with the hint', async () => {
    const p = makeProject({ machines: `${SERVER}\n10.240.0.20 node-0.kubernetes.local node-0 10.200.0.0/24\n10.240.0.21 node-1.kubernetes.local node-1\n` });
    const run = await hardway(p, 'inventory');
    failedCleanly(run, 2, `${p.machines}:3: 2 control-plane machines (server, node-1): 2 etcd members tolerate 0 failures, no more than 1 would`);
    expect(run.stderr).toContain('hint: did you forget the pod subnet on node-1? A line without one is a control-plane machine. To run 2 on purpose, set evenControlPlanes: true in cluster.yaml');
  });

  it('four control planes are refused too; evenControlPlanes: true in cluster.yaml takes them', async () => {
    const four = [0, 1, 2, 3].map((i) => `10.240.0.1${i} server-${i}.kubernetes.local server-${i}`).join('\n') + '\n';
    const p = makeProject({ machines: four });
    failedCleanly(await hardway(p, 'inventory'), 2, /machines\.txt:4: 4 control-plane machines \(server-0, server-1, server-2, server-3\): 4 etcd members tolerate 1 failure, no more than 3 would/);
    const asked = makeProject({ machines: four, cluster: 'evenControlPlanes: true\n' });
    expect((await hardway(asked, 'inventory')).code).toBe(0);
  });

  it('lab up and multipass up, asked for an even number of servers, write evenControlPlanes into cluster.yaml', () => {
    expect(parseClusterSettings(labClusterYaml(undefined, 'dev', { servers: 2 }), 'cluster.yaml').evenControlPlanes).toBe(true);
    expect(parseClusterSettings(labClusterYaml(undefined, 'dev', { servers: 3 }), 'cluster.yaml').evenControlPlanes).toBeUndefined();
    expect(parseClusterSettings(multipassClusterYaml(undefined, 'k8s', 4), 'cluster.yaml').evenControlPlanes).toBe(true);
    expect(parseClusterSettings(multipassClusterYaml(undefined, 'k8s', 1), 'cluster.yaml').evenControlPlanes).toBeUndefined();
  });
});

describe('input checks (item 16)', () => {
  it('machines.txt with CR-only line endings reads as its lines', async () => {
    const p = makeProject({ machines: `${SERVER}\r10.240.0.20 node-0.kubernetes.local node-0 10.200.0.0/24\r10.240.0.21 node-1.kubernetes.local node-1 10.200.1.0/24\r` });
    const run = await hardway(p, 'inventory', '--json');
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout).machines.map((m: { hostname: string; line: number }) => `${m.hostname}:${m.line}`)).toEqual(['server:1', 'node-0:2', 'node-1:3']);
  });

  it('a YAML alias in cluster.yaml is named with its line, never shown as the parser\'s object', async () => {
    const p = makeProject({ cluster: 'clusterCidr: &net 10.200.0.0/16\nserviceCidr: *net\n' });
    const run = await hardway(p, 'inventory');
    failedCleanly(run, 2, `${p.dir}/cluster.yaml:2: an alias (*net) where hardway reads a value`);
    expect(run.stderr).not.toContain('{"source"');
  });

  it('1e400 (too large for a number) reads as Infinity, not null', async () => {
    const p = makeProject({ cluster: 'apiPort: 1e400\n' });
    failedCleanly(await hardway(p, 'inventory'), 2, 'apiPort: expected a whole number from 1 to 65535, got Infinity');
  });
});
