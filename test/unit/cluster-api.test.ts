// The direct route to the cluster (src/cluster-api/): reads from a fake API server over real TLS
// give the plans the kubectl route gives, the client certificate is sent and checked, an endpoint
// the jumpbox cannot reach is given up once (and said), and etcd's health reads as etcdctl's.
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyChange } from '../../src/engine/apply.ts';
import { createFacts, type Facts } from '../../src/engine/facts.ts';
import type { ChangeStep } from '../../src/engine/types.ts';
import type { Inventory } from '../../src/inventory.ts';
import { ClusterApi, type ClusterApiOptions } from '../../src/cluster-api/cluster-api.ts';
import { directFacts } from '../../src/engine/direct-facts.ts';
import { directApply } from '../../src/engine/direct-apply.ts';
import { describeChange } from '../../src/engine/apply.ts';
import { gatherApi } from '../../src/doctor/api.ts';
import { NoAnswer, HttpsEndpoint } from '../../src/cluster-api/https-endpoint.ts';
import { rolloutState } from '../../src/cluster-api/answers.ts';
import { apiClientTls, etcdClientTls } from '../../src/cluster-api/credentials.ts';
import { apiReady, clusterObjects, podsLabelled } from '../../src/probes/kubectl.ts';
import { etcdHealth } from '../../src/probes/etcdctl.ts';
import { kubeletRbacStep, RBAC_NAME } from '../../src/steps/kubelet-rbac.ts';
import { dnsStep } from '../../src/steps/dns.ts';
import { etcdProblems } from '../../src/steps/verify.ts';
import { debianMachine } from '../fixtures/debian-machine.ts';
import { startFakeApiServer, type FakeApiServer } from '../fixtures/fake-api-server.ts';
import { parse } from 'yaml';
import { project } from './step-plans.helpers.ts';
import { stepOptions } from './engine.helpers.ts';

const FAST = { connectMs: 1000, answerMs: 2000 };
const fastPace = { everyMs: 10, sleep: (ms: number) => new Promise<void>((r) => setTimeout(r, ms)) };

/** A loopback port nothing listens on (taken, then let go). */
async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as AddressInfo).port;
  await new Promise((r) => s.close(r));
  return port;
}

describe('cluster-api: the direct route to the API server and etcd', () => {
  let inv: Inventory;
  let fake: FakeApiServer;
  let machine: ReturnType<typeof debianMachine>;
  const server = () => inv.controlPlanes[0]!;
  const apiFor = (o: ClusterApiOptions = {}) => new ClusterApi(inv, { apiAddress: { host: '127.0.0.1', port: fake.port }, timeouts: FAST, ...o });

  beforeAll(async () => {
    inv = await project();
    machine = debianMachine('server');
    machine.state.units.set('kube-apiserver', { enabled: 'enabled', active: 'active' });
    fake = await startFakeApiServer(inv.dir, machine.state);
  });
  afterAll(async () => fake.close());

  /** The step's plan over these facts, with every write on the machine refused. */
  const planWith = async (step: ChangeStep, facts: Facts) => {
    machine.planning = true;
    try {
      return await step.plan({ host: 'server', machine: server(), inventory: inv, facts, options: stepOptions(), log: { info: () => {}, debug: () => {} } });
    } finally {
      machine.planning = false;
    }
  };
  /** What a plan does, without the route its changes take. */
  const essence = (changes: Awaited<ReturnType<typeof planWith>>) => changes.map((c) => ({ reason: c.reason, ...(c.kind === 'exec' ? { stdin: c.stdin } : {}) }));

  it('direct reads plan what the kubectl route plans: fresh, converged, and a deleted RBAC binding found as drift', async () => {
    const api = apiFor();
    const direct = directFacts(createFacts(machine), api, inv, server());
    for (const step of [kubeletRbacStep, dnsStep]) {
      const viaKubectl = await planWith(step, createFacts(machine));
      expect(viaKubectl.length).toBeGreaterThan(0);
      expect(essence(await planWith(step, direct))).toEqual(essence(viaKubectl));
      for (const c of viaKubectl) await applyChange(machine, c);
      expect(await planWith(step, createFacts(machine))).toEqual([]);
      expect(await planWith(step, direct)).toEqual([]);
    }
    machine.state.objects.delete(`clusterrolebinding/${RBAC_NAME}`);
    const drift = await planWith(kubeletRbacStep, direct);
    expect(essence(drift)).toEqual(essence(await planWith(kubeletRbacStep, createFacts(machine))));
    expect(drift.map((c) => c.reason)).toEqual([`${RBAC_NAME} missing or different`]);
    // Every read of the direct plans went to the fake: none was a kubectl run on the machine.
    expect(fake.seen.some((r) => r.path === `/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/${encodeURIComponent(RBAC_NAME)}`)).toBe(true);
    api.close();
  });

  it('sends the admin client certificate, and the fake (like the API server) refuses one the cluster CA did not sign', async () => {
    const api = apiFor();
    fake.seen.length = 0;
    await api.apiServer()!.get('/readyz');
    expect(fake.seen.map((r) => r.clientCn)).toEqual(['admin']);
    // The etcd client certificate is signed by the etcd CA: no TLS session, so no answer.
    const wrong = new HttpsEndpoint('127.0.0.1', fake.port, { ...etcdClientTls(inv), ca: apiClientTls(inv).ca }, FAST);
    await expect(wrong.get('/readyz')).rejects.toBeInstanceOf(NoAnswer);
    wrong.close();
    api.close();
  });

  it('the server certificate is checked too: one the cluster CA did not sign is no answer', async () => {
    const other = new HttpsEndpoint('127.0.0.1', fake.port, { ...apiClientTls(inv), ca: readFileSync(join(inv.dir, 'pki/etcd-ca.crt')) }, FAST);
    await expect(other.get('/readyz')).rejects.toThrow(/did not answer/);
    other.close();
  });

  it('an API server the jumpbox cannot reach (a closed loopback port) is given up once, said once, and kubectl answers', async () => {
    const said: string[] = [];
    const api = new ClusterApi(inv, { apiAddress: { host: '127.0.0.1', port: await closedPort() }, timeouts: FAST, say: (l) => said.push(l) });
    const log: string[] = [];
    const facts = directFacts(createFacts(machine, (l) => log.push(l)), api, inv, server());
    const resources = [`clusterrole/${RBAC_NAME}`];
    const first = await facts.ask({ o: clusterObjects.ask(resources) });
    expect(first.o.ok).toBe(true);
    expect(first.o.ok && first.o.items.map((o) => o.metadata?.name)).toEqual([RBAC_NAME]);
    expect(log.filter((l) => l.startsWith('probe cluster-objects'))).toHaveLength(1);
    expect(api.apiServer()).toBeUndefined();
    await facts.ask({ o: clusterObjects.ask(resources), p: podsLabelled.ask('kube-system', 'k8s-app=kube-dns') });
    expect(said).toHaveLength(1);
    expect(said[0]).toMatch(/^https:\/\/127\.0\.0\.1:\d+ does not answer this machine .*kubectl\/etcdctl on the control-plane machine over SSH/);
    api.close();
  });

  it('an API server that is down for everyone (kubectl fails too) is not given up', async () => {
    const said: string[] = [];
    const api = new ClusterApi(inv, { apiAddress: { host: '127.0.0.1', port: await closedPort() }, timeouts: FAST, say: (l) => said.push(l) });
    const down = debianMachine('server');
    down.answer(clusterObjects, () => ({ code: 1, stdout: '' }));
    const facts = directFacts(createFacts(down), api, inv, server());
    expect((await facts.ask({ o: clusterObjects.ask(['clusterrole/x']) })).o).toMatchObject({ ok: false, code: 1 });
    expect(api.apiServer()).toBeDefined();
    expect(said).toEqual([]);
    api.close();
  });

  it('etcd health from the members\' /health reads as etcdctl endpoint health does (verify finds nothing wrong)', async () => {
    const etcd = await startFakeApiServer(inv.dir, { objects: new Map() }, { crt: 'pki/machines/server/etcd-server.crt', key: 'pki/machines/server/etcd-server.key', ca: 'pki/etcd-ca.crt' });
    try {
      const api = apiFor({ etcdAddress: () => ({ host: '127.0.0.1', port: etcd.port }) });
      const facts = directFacts(createFacts(debianMachine('server')), api, inv, server());
      const { h } = await facts.ask({ h: etcdHealth.ask(false) });
      expect(h).toEqual({ ok: true, members: [{ url: expect.stringMatching(/^https:\/\/127\.0\.0\.1:\d+$/), healthy: true }] });
      expect(etcdProblems(inv, h)).toEqual([]);
      expect(etcd.seen.map((r) => [r.path, r.clientCn])).toEqual([['/health', 'kube-apiserver-etcd-client']]);
      api.close();
    } finally {
      await etcd.close();
    }
  });

  it('a rollout is done as kubectl rollout status says: new replicas updated and available, no old ones left', () => {
    const spec = { metadata: { generation: 2 }, spec: { replicas: 2 } };
    expect(rolloutState('coredns', { ...spec, status: { observedGeneration: 1 } }).done).toBe(false);
    expect(rolloutState('coredns', { ...spec, status: { observedGeneration: 2, replicas: 3, updatedReplicas: 2, availableReplicas: 2 } }).said).toMatch(/1 old replicas are pending/);
    expect(rolloutState('coredns', { ...spec, status: { observedGeneration: 2, replicas: 2, updatedReplicas: 2, availableReplicas: 1 } }).done).toBe(false);
    expect(rolloutState('coredns', { ...spec, status: { observedGeneration: 2, replicas: 2, updatedReplicas: 2, availableReplicas: 2 } })).toEqual({ done: true, said: 'deployment "coredns" successfully rolled out' });
  });

  it('the wait for the API asks /readyz directly until it answers ok, and says the last answer when it gives up', async () => {
    let ready = false;
    const flaky = await startFakeApiServer(inv.dir, { objects: new Map(), ready: () => ready });
    try {
      const api = new ClusterApi(inv, { apiAddress: { host: '127.0.0.1', port: flaky.port }, timeouts: FAST });
      const facts = directFacts(createFacts(debianMachine('server')), api, inv, server(), () => {}, fastPace);
      const notYet = await facts.wait(apiReady.ask(0));
      expect(notYet).toEqual({ ok: false, said: '500 Internal Server Error: [-]etcd failed' });
      setTimeout(() => (ready = true), 50);
      expect((await facts.wait(apiReady.ask(5))).ok).toBe(true);
      expect(flaky.seen.length).toBeGreaterThan(2);
      api.close();
    } finally {
      await flaky.close();
    }
  });

  it('writes: a server-side apply (PATCH apply-patch+yaml, fieldManager=hardway, force) from the jumpbox; no kubectl on the machine; the re-plan is empty', async () => {
    const api = apiFor();
    const direct = directFacts(createFacts(machine), api, inv, server());
    machine.state.objects.delete(`clusterrolebinding/${RBAC_NAME}`);
    const writes = directApply(api, server(), machine);
    const plan = writes.route(await planWith(kubeletRbacStep, direct));
    expect(plan.map(describeChange)).toEqual([`api: apply clusterrole/${RBAC_NAME}, clusterrolebinding/${RBAC_NAME} (${RBAC_NAME} missing or different)`]);
    fake.seen.length = 0;
    const ran = machine.commands.length;
    for (const c of plan) await writes.apply(c);
    expect(machine.commands.length).toBe(ran);
    const patches = fake.seen.filter((r) => r.method === 'PATCH');
    expect(patches.map((r) => [r.path, r.contentType, r.clientCn])).toEqual([
      [`/apis/rbac.authorization.k8s.io/v1/clusterroles/${encodeURIComponent(RBAC_NAME)}?fieldManager=hardway&force=true`, 'application/apply-patch+yaml', 'admin'],
      [`/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/${encodeURIComponent(RBAC_NAME)}?fieldManager=hardway&force=true`, 'application/apply-patch+yaml', 'admin'],
    ]);
    expect(parse(patches[1]!.body)).toMatchObject({ kind: 'ClusterRoleBinding', metadata: { name: RBAC_NAME }, subjects: [{ kind: 'User', name: 'kubernetes' }] });
    expect(await planWith(kubeletRbacStep, direct)).toEqual([]);
    expect(await planWith(kubeletRbacStep, createFacts(machine))).toEqual([]);
    api.close();
  });

  it('writes: a delete that waits asks until the object is gone; a Service at another address is made anew directly', async () => {
    const api = apiFor();
    const direct = directFacts(createFacts(machine), api, inv, server());
    const service = machine.state.objects.get('service/kube-dns')!;
    machine.state.objects.set('service/kube-dns', { ...service, spec: { ...service.spec, clusterIP: '10.32.0.99' } });
    const writes = directApply(api, server(), machine);
    const plan = writes.route(await planWith(dnsStep, direct));
    expect(plan.map(describeChange)).toEqual([
      expect.stringMatching(/^api: delete service\/kube-dns \(and wait until gone\) \(the kube-dns Service has address 10\.32\.0\.99/),
      expect.stringMatching(/^api: apply service\/kube-dns \(/),
    ]);
    fake.seen.length = 0;
    for (const c of plan) await writes.apply(c);
    expect(fake.seen.map((r) => `${r.method} ${r.path.replace(/\?.*/, '')}`)).toEqual([
      'DELETE /api/v1/namespaces/kube-system/services/kube-dns', 'GET /api/v1/namespaces/kube-system/services/kube-dns', 'PATCH /api/v1/namespaces/kube-system/services/kube-dns',
    ]);
    expect(machine.state.objects.get('service/kube-dns')!.spec.clusterIP).toBe(inv.clusterDnsIp);
    expect(await planWith(dnsStep, direct)).toEqual([]);
    api.close();
  });

  it('writes: with the API unreachable from here, the change is planned and made with kubectl on the machine', async () => {
    const said: string[] = [];
    const api = new ClusterApi(inv, { apiAddress: { host: '127.0.0.1', port: await closedPort() }, timeouts: FAST, say: (l) => said.push(l) });
    machine.state.objects.delete(`clusterrole/${RBAC_NAME}`);
    const writes = directApply(api, server(), machine);
    const apply = (await planWith(kubeletRbacStep, createFacts(machine)))[0]!;
    // Still thought reachable (nothing asked yet): the direct write gets no answer, kubectl makes it, the endpoint is given up.
    await writes.apply(apply);
    expect(machine.commands.at(-1)).toMatch(/^kubectl --kubeconfig=\S+ --request-timeout=5s apply -f -$/);
    expect(said).toHaveLength(1);
    expect(writes.route([apply]).map(describeChange)).toEqual([expect.stringMatching(/^run: kubectl .* apply -f - \(/)]);
    expect(await planWith(kubeletRbacStep, createFacts(machine))).toEqual([]);
    api.close();
  });

  it('doctor reads nodes, pods, deployments and events directly, as one List like kubectl\'s; with no answer it asks kubectl', async () => {
    machine.state.objects.set('node/node-0', { kind: 'Node', apiVersion: 'v1', metadata: { name: 'node-0' }, spec: { podCIDR: '10.200.0.0/24' }, status: { conditions: [{ type: 'Ready', status: 'True' }] } });
    const evidence = await gatherApi(inv, { PATH: '' }, apiFor());
    expect(evidence.error).toBeUndefined();
    expect(evidence.command).toMatch(/^GET https:\/\/127\.0\.0\.1:\d+ \/api\/v1\/nodes \/api\/v1\/pods \/apis\/apps\/v1\/deployments \/api\/v1\/events$/);
    expect(evidence.nodes).toEqual([{ name: 'node-0', ready: 'True', podCidr: '10.200.0.0/24' }]);
    expect(evidence.dnsDeployment).toEqual({ replicas: 2, ready: 2 });
    const said: string[] = [];
    const unreachable = new ClusterApi(inv, { apiAddress: { host: '127.0.0.1', port: await closedPort() }, timeouts: FAST });
    const viaKubectl = await gatherApi(inv, { PATH: '' }, unreachable, (l) => said.push(l));
    expect(viaKubectl.command).toMatch(/^kubectl /);
    // The project's kubectl is a stand-in that prints nothing: asked all the same, its silence is evidence, not a crash.
    expect(viaKubectl.error).toMatch(/^kubectl's answer is not JSON/);
    expect(said).toEqual([expect.stringMatching(/did not answer: .*asking with kubectl instead$/)]);
  });
});
