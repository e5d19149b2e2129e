// One typed answer per API and etcd probe, whichever route answers it: kubectl or etcdctl on the
// machine (the fake Debian machine's cluster, read as those programs print it) and the direct
// route over HTTPS (the fake API server over the same objects) give equal values; doctor's lists
// and the bundle's tables are registry probes too, asked with a real shell on the jumpbox.
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFacts } from '../../src/engine/facts.ts';
import type { Inventory } from '../../src/inventory.ts';
import { ClusterApi } from '../../src/cluster-api/cluster-api.ts';
import { answerDirectly, directFacts } from '../../src/engine/direct-facts.ts';
import { gatherApi, jumpboxFacts, jumpboxKubectl } from '../../src/doctor/api.ts';
import { clusterBundle } from '../../src/doctor/bundle.ts';
import type { ProbeRequest } from '../../src/probes/probe.ts';
import { apiLists, apiReady, clusterObjects, clusterObjectsAgain, clusterTable, nodeListed, podsLabelled, rolloutDone } from '../../src/probes/kubectl.ts';
import { etcdHealth } from '../../src/probes/etcdctl.ts';
import { debianMachine } from '../fixtures/debian-machine.ts';
import { startFakeApiServer, type FakeApiServer } from '../fixtures/fake-api-server.ts';
import { project } from './step-plans.helpers.ts';

const FAST = { connectMs: 1000, answerMs: 2000 };
const ok = (stdout = '') => ({ code: 0, stdout, stderr: '' });

const node = (name: string) => ({ apiVersion: 'v1', kind: 'Node', metadata: { name }, spec: { podCIDR: '10.200.0.0/24' }, status: { conditions: [{ type: 'Ready', status: 'True' }] } });
const pod = (name: string) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'kube-system', labels: { 'k8s-app': 'kube-dns' } }, spec: { nodeName: 'node-0', containers: [{ image: 'coredns' }] }, status: { phase: 'Running' } });
const deployment = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'coredns', namespace: 'kube-system', generation: 1 }, spec: { replicas: 2 },
  status: { observedGeneration: 1, replicas: 2, updatedReplicas: 2, readyReplicas: 2, availableReplicas: 2 } };
const role = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'r' }, rules: [] };

describe('each API and etcd probe: one typed answer from kubectl over SSH and from the API over HTTPS', () => {
  let inv: Inventory;
  let fake: FakeApiServer;
  let machine: ReturnType<typeof debianMachine>;
  let api: ClusterApi;
  const server = () => inv.controlPlanes[0]!;

  beforeAll(async () => {
    inv = await project();
    machine = debianMachine('server');
    for (const o of [role, node('node-0'), node('node-1'), deployment]) machine.state.objects.set(`${o.kind.toLowerCase()}/${o.metadata.name}`, o);
    machine.state.dnsPods = [pod('coredns-a'), pod('coredns-b')];
    // What kubectl prints for the probes the fake machine does not answer itself.
    machine.answer(nodeListed, (name) => ok(machine.state.objects.has(`node/${name}`) ? `node/${name}\n` : ''));
    machine.answer(rolloutDone, () => ok('Waiting for deployment "coredns" rollout to finish: 1 of 2 updated replicas are available...\ndeployment "coredns" successfully rolled out\n'));
    // Many Nodes: the named objects, then `kubectl get nodes` (every Node), two pretty-printed documents.
    const objects = machine.answerOf(clusterObjects);
    machine.answer(clusterObjects, (resources) => (resources.filter((r) => r.startsWith('nodes/')).length > 3
      ? ok(`${JSON.stringify(role, null, 4)}\n${JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [node('node-0'), node('node-1')] }, null, 4)}\n`)
      : objects(resources)));
    fake = await startFakeApiServer(inv.dir, machine.state);
    api = new ClusterApi(inv, { apiAddress: { host: '127.0.0.1', port: fake.port }, timeouts: FAST });
  });
  afterAll(async () => {
    api.close();
    await fake.close();
  });

  /** The answer over SSH (kubectl on the machine) and the one over HTTPS, which must come from the fake API server. */
  const both = async <R>(req: () => ProbeRequest<R>, wait = false): Promise<[R, R]> => {
    const facts = createFacts(machine);
    const viaKubectl = wait ? await facts.wait(req()) : (await facts.ask({ a: req() })).a;
    const seen = fake.seen.length;
    const direct = await answerDirectly(req(), api, inv, server());
    expect(direct, 'the direct route answered').toBeDefined();
    expect(fake.seen.length).toBeGreaterThan(seen);
    return [viaKubectl, direct!];
  };

  it('cluster-objects: the objects named, a missing one left out', async () => {
    const [kubectl, https] = await both(() => clusterObjects.ask(['clusterrole/r', 'deployment/coredns', 'clusterrole/missing']));
    expect(kubectl).toEqual({ ok: true, items: [role, deployment] });
    expect(https).toEqual(kubectl);
  });

  it('cluster-objects with many Nodes: read as the list of every Node, two documents on the kubectl route', async () => {
    const nodes = ['node-0', 'node-1', 'node-2', 'node-3'].map((n) => `nodes/${n}`);
    const [kubectl, https] = await both(() => clusterObjects.ask(['clusterrole/r', ...nodes]));
    expect(kubectl).toEqual({ ok: true, items: [role, node('node-0'), node('node-1')] });
    expect(https).toEqual(kubectl);
  });

  it('cluster-objects-again (the wait verify asks): the same answer', async () => {
    const [kubectl, https] = await both(() => clusterObjectsAgain.ask(1, ['clusterrole/r']), true);
    expect(kubectl).toEqual({ ok: true, items: [role] });
    expect(https).toEqual(kubectl);
  });

  it('node-listed: listed while the API has the Node, not once it is gone', async () => {
    expect(await both(() => nodeListed.ask('node-0'))).toEqual([{ ok: true, listed: true }, { ok: true, listed: true }]);
    expect(await both(() => nodeListed.ask('node-9'))).toEqual([{ ok: true, listed: false }, { ok: true, listed: false }]);
  });

  it('pods-labelled: the pods with their kind', async () => {
    const [kubectl, https] = await both(() => podsLabelled.ask('kube-system', 'k8s-app=kube-dns'));
    expect(kubectl).toEqual({ ok: true, items: [pod('coredns-a'), pod('coredns-b')] });
    expect(https).toEqual(kubectl);
  });

  it('wait-api and wait-rollout: done, with the same last word', async () => {
    expect(await both(() => apiReady.ask(1), true)).toEqual([{ ok: true, said: '' }, { ok: true, said: '' }]);
    const done = { ok: true, said: 'deployment "coredns" successfully rolled out' };
    expect(await both(() => rolloutDone.ask(1, 'coredns', 'kube-system'), true)).toEqual([done, done]);
  });

  it('the machine\'s route answers the same typed value when the API server does not answer the jumpbox', async () => {
    const unreachable = new ClusterApi(inv, { apiAddress: { host: '127.0.0.1', port: 1 }, timeouts: FAST });
    const { o } = await directFacts(createFacts(machine), unreachable, inv, server()).ask({ o: clusterObjects.ask(['clusterrole/r']) });
    expect(o).toEqual({ ok: true, items: [role] });
    unreachable.close();
    // A wait too: the machine is asked the registry's own request (a copy of it would be refused).
    const again = new ClusterApi(inv, { apiAddress: { host: '127.0.0.1', port: 1 }, timeouts: FAST });
    expect(await directFacts(createFacts(machine), again, inv, server()).wait(apiReady.ask(1))).toEqual({ ok: true, said: '' });
    again.close();
  });

  it('etcd-health: each member healthy, from etcdctl and from the members\' /health', async () => {
    const etcd = await startFakeApiServer(inv.dir, { objects: new Map() }, { crt: 'pki/machines/server/etcd-server.crt', key: 'pki/machines/server/etcd-server.key', ca: 'pki/etcd-ca.crt' });
    const etcdApi = new ClusterApi(inv, { apiAddress: { host: '127.0.0.1', port: fake.port }, etcdAddress: () => ({ host: '127.0.0.1', port: etcd.port }), timeouts: FAST });
    const m = debianMachine('server');
    m.answer(etcdHealth, () => ok(`https://127.0.0.1:${etcd.port} is healthy: successfully committed proposal: took = 1.9ms\n`));
    try {
      const { h } = await createFacts(m).ask({ h: etcdHealth.ask(false) });
      const direct = await answerDirectly(etcdHealth.ask(false), etcdApi, inv, server());
      expect(h).toEqual({ ok: true, members: [{ url: `https://127.0.0.1:${etcd.port}`, healthy: true }] });
      expect(direct).toEqual(h);
      expect(etcd.seen.map((r) => r.path)).toEqual(['/health']);
    } finally {
      etcdApi.close();
      await etcd.close();
    }
  });

  it('api-lists (doctor): every Node, Pod, Deployment and Event, from kubectl on the jumpbox and over HTTPS; doctor\'s evidence is the same', async () => {
    const jumpbox = debianMachine('jumpbox');
    const everything = { apiVersion: 'v1', kind: 'List', items: [node('node-0'), node('node-1'), pod('coredns-a'), pod('coredns-b'), deployment] };
    jumpbox.answer(apiLists, () => ok(`${JSON.stringify(everything, null, 4)}\n`));
    const k = jumpboxKubectl(inv, '/usr/bin/kubectl');
    const { l } = await createFacts(jumpbox).ask({ l: apiLists.ask(k) });
    expect(l).toEqual({ ok: true, items: everything.items });
    expect(await answerDirectly(apiLists.ask(k), api, inv, 'jumpbox')).toEqual(l);
    // gatherApi closes the ClusterApi it is given: one of its own.
    const direct = await gatherApi(inv, { PATH: '' }, new ClusterApi(inv, { apiAddress: { host: '127.0.0.1', port: fake.port }, timeouts: FAST }));
    const viaKubectl = await gatherApi(inv, { PATH: '' }, undefined, () => {}, () => createFacts(jumpbox));
    expect(direct.command).toMatch(/^GET https:/);
    expect(viaKubectl.command).toMatch(/^kubectl --kubeconfig pki\/jumpbox\.kubeconfig --server=https:\/\/\S+ --request-timeout=5s get nodes,pods,deployments,events --all-namespaces -o json$/);
    expect({ ...direct, command: '' }).toEqual({ ...viaKubectl, command: '' });
    expect(direct.error).toBeUndefined();
    expect(direct.nodes.map((n) => n.name)).toEqual(['node-0', 'node-1']);
  });
});

describe('doctor\'s and the bundle\'s kubectl on the jumpbox, a registry probe run by a real shell', () => {
  /** A kubectl stand-in: prints `out` on stdout, `err` on stderr, exits `code`. */
  const standIn = (out: string, err: string, code: number) => {
    const dir = mkdtempSync(join(tmpdir(), 'hardway-kubectl-'));
    const file = join(dir, 'kubectl');
    writeFileSync(file, `#!/bin/sh\nprintf '%s' '${out}'\nprintf '%s\\n' '${err}' >&2\nexit ${code}\n`);
    chmodSync(file, 0o755);
    return file;
  };
  let inv: Inventory;
  beforeAll(async () => {
    inv = await project();
  });

  it('a table kubectl printed is kept as it is; a failure gives its exit code and its stderr (a probe drops stderr otherwise)', async () => {
    const good = jumpboxKubectl(inv, standIn('NAME     STATUS\nnode-0   Ready\n', 'a warning', 0));
    expect((await jumpboxFacts().ask({ t: clusterTable.ask(good, 'nodes') })).t).toEqual({ ok: true, text: 'NAME     STATUS\nnode-0   Ready\n' });
    const bad = jumpboxKubectl(inv, standIn('', 'error: You must be logged in to the server (Unauthorized)', 1));
    expect((await jumpboxFacts().ask({ t: clusterTable.ask(bad, 'nodes') })).t).toEqual({ ok: false, code: 1, error: 'error: You must be logged in to the server (Unauthorized)\n' });
    const lists = await jumpboxFacts().ask({ l: apiLists.ask(bad) });
    expect(lists.l).toEqual({ ok: false, code: 1, error: 'error: You must be logged in to the server (Unauthorized)' });
  });

  it('the bundle\'s cluster/ files come from the cluster-table probe', async () => {
    const jumpbox = debianMachine('jumpbox');
    jumpbox.answer(clusterTable, (_k, table) => ok(`table of ${table}\n`));
    const texts = await clusterBundle(inv, { PATH: '' }, () => createFacts(jumpbox));
    expect(texts).toEqual([
      { path: 'cluster/nodes.txt', text: 'table of nodes\n' },
      { path: 'cluster/pods.txt', text: 'table of pods\n' },
      { path: 'cluster/events.txt', text: 'table of events\n' },
    ]);
  });
});
