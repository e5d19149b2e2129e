// verify's reading of `kubectl get nodes -o json`: a worker that never registered and one that is
// NotReady are told apart, with the kubelet's own reason, and Ready workers give no problem.
import { describe, expect, it } from 'vitest';
import { coalescedFacts } from '../../src/engine/coalesced-facts.ts';
import { factsFrom, type FactRequest } from '../../src/engine/facts.ts';
import { clusterObjects, getObjectsCommand, NODE_LIST_FROM, objectItems } from '../../src/probes/kubectl.ts';
import { KUBELET_START_WAIT_S, kubeletsStarting, nodeStates, readyDeadline } from '../../src/steps/verify.ts';

const node = (name: string, status?: string, message?: string) => ({
  metadata: { name },
  status: { conditions: status ? [{ type: 'MemoryPressure', status: 'False' }, { type: 'Ready', status, message }] : undefined },
});

describe('verify: node states from the API', () => {
  it('names a missing node and a NotReady node with its reason', () => {
    const json = JSON.stringify({ items: [node('node-0', 'True'), node('node-1', 'Unknown', 'Kubelet stopped posting node status.')] });
    expect(nodeStates(objectItems(json), ['node-0', 'node-1', 'node-2'])).toEqual([
      'node node-1 is not Ready (Kubelet stopped posting node status.)',
      'node node-2 is not registered with the API (its kubelet never reached the API server)',
    ]);
  });

  it('all Ready: no problem', () => {
    expect(nodeStates(objectItems(JSON.stringify({ items: [node('node-0', 'True'), node('node-1', 'True')] })), ['node-0', 'node-1'])).toEqual([]);
  });

  it('a node with no conditions yet is not Ready', () => {
    expect(nodeStates(objectItems(JSON.stringify({ items: [node('node-0')] })), ['node-0'])).toEqual(['node node-0 is not Ready']);
  });

  it('reads one Node answered as the object itself (one worker), and skips other kinds in a shared List', () => {
    expect(nodeStates(objectItems(JSON.stringify({ kind: 'Node', ...node('node-0', 'True') })), ['node-0'])).toEqual([]);
    const shared = { kind: 'List', items: [{ kind: 'ClusterRole', metadata: { name: 'node-1' } }, { kind: 'Node', ...node('node-0', 'True') }] };
    expect(nodeStates(objectItems(JSON.stringify(shared)), ['node-0', 'node-1'])).toEqual(['node node-1 is not registered with the API (its kubelet never reached the API server)']);
  });
});

describe('cluster object reads asked at once share one kubectl', () => {
  it("verify's nodes and kubelet-rbac's objects go out as one kubectl get of every TYPE/NAME", async () => {
    const sent: FactRequest[][] = [];
    const inner = factsFrom(async (asked) => (sent.push(asked), asked.map(() => ({ code: 0, stdout: '{"kind":"List","items":[]}' }))), async () => { throw new Error('no wait here'); }, () => undefined);
    const facts = coalescedFacts(inner);
    const [rbac, nodes] = await Promise.all([
      facts.batch([clusterObjects.ask(['clusterrole/x', 'clusterrolebinding/x'])]),
      facts.batch([clusterObjects.ask(['nodes/node-0', 'nodes/node-1'])]),
    ]);
    expect(sent).toHaveLength(1);
    expect(sent[0]).toHaveLength(1);
    const cmd = sent[0]![0]!;
    expect(cmd.op === 'P' && cmd.cmd.text).toMatch(/kubectl --kubeconfig=\S+ --request-timeout=10s get clusterrole\/x clusterrolebinding\/x nodes\/node-0 nodes\/node-1 -n kube-system -o json --ignore-not-found 2>&1 >&3\)/);
    expect(rbac).toEqual(nodes);
  });
});

describe('many nodes are read as one list', () => {
  const names = (n: number) => Array.from({ length: n }, (_, i) => `nodes/node-${i}`);

  it(`reads ${NODE_LIST_FROM} or more Nodes with one "get nodes" after the named objects, fewer by name`, () => {
    expect(getObjectsCommand(names(NODE_LIST_FROM - 1)).text).toMatch(/get nodes\/node-0 nodes\/node-1 nodes\/node-2 -n kube-system -o json --ignore-not-found 2>&1 >&3\)/);
    const many = getObjectsCommand(['clusterrole/x', ...names(100)]).text;
    expect(many).toMatch(/get clusterrole\/x -n kube-system -o json --ignore-not-found && kubectl --kubeconfig=\S+ --request-timeout=10s get nodes -o json 2>&1 >&3\)/);
    expect(many).not.toContain('nodes/node-');
    expect(getObjectsCommand(names(100)).text).toMatch(/; kubectl --kubeconfig=\S+ --request-timeout=10s get nodes -o json 2>&1 >&3\)/);
  });

  it('reads the items of both documents of such an answer, pretty-printed as kubectl prints them', () => {
    const rbac = JSON.stringify({ kind: 'List', items: [{ kind: 'ClusterRole', metadata: { name: 'x' } }] }, null, 4);
    const list = JSON.stringify({ kind: 'List', items: [{ kind: 'Node', ...node('node-0', 'True') }, { kind: 'Node', ...node('node-9', 'True') }] }, null, 4);
    const items = objectItems<{ kind?: string; items?: never[] }>(`${rbac}\n${list}\n`);
    expect(items.map((i) => i.kind)).toEqual(['ClusterRole', 'Node', 'Node']);
    // Nodes the inventory does not name (in the list of every Node) are no problem of verify's.
    expect(nodeStates(objectItems(`${rbac}\n${list}\n`), ['node-0', 'node-1'])).toEqual(['node node-1 is not registered with the API (its kubelet never reached the API server)']);
  });
});

describe('objectItems splits only between whole documents', () => {
  it('splits three documents, not at an inner brace closing a nested object, nor inside one compact line', () => {
    const doc = (name: string) => JSON.stringify({ kind: 'ConfigMap', metadata: { name }, data: { a: '}', b: '{' } }, null, 4);
    const compact = JSON.stringify({ kind: 'List', items: [{ kind: 'Node', metadata: { name: 'n' } }] });
    expect(objectItems<{ metadata?: { name?: string }; items?: never[] }>(`${doc('a')}\n${doc('b')}\n${doc('c')}\n`).map((i) => i.metadata?.name)).toEqual(['a', 'b', 'c']);
    expect(objectItems<{ kind?: string; items?: never[] }>(`${compact}\n`).map((i) => i.kind)).toEqual(['Node']);
    expect(objectItems('')).toEqual([]);
  });
});

describe('verify: a kubelet that is still starting is waited for, not a fault', () => {
  const PLEG = 'PLEG is not healthy: pleg has yet to be successful';
  const starting = (name: string, since: string, message = PLEG, status = 'False') => ({
    kind: 'Node', metadata: { name },
    status: { conditions: [{ type: 'Ready', status, reason: 'KubeletNotReady', message, lastTransitionTime: since }] },
  });

  it('finds the nodes whose kubelet says it is still starting, with that start; not a node Ready, stopped, with another fault or no time of its start', () => {
    const json = JSON.stringify({ items: [
      starting('node-0', '2026-12-02T15:00:00Z'),
      starting('node-1', '2026-12-02T15:01:00Z', 'container runtime status check may not have completed yet'),
      starting('node-2', '2026-12-02T15:00:00Z', 'Kubelet stopped posting node status.', 'Unknown'),
      starting('node-3', '2026-12-02T15:00:00Z', 'PLEG is not healthy: pleg was last seen active 3m0s ago; threshold is 3m0s'),
      node('node-4', 'True'),
      starting('other', '2026-12-02T15:00:00Z'),
      starting('node-5', ''),
    ] });
    expect(kubeletsStarting(objectItems(json), ['node-0', 'node-1', 'node-2', 'node-3', 'node-4', 'node-5'])).toEqual([
      { node: 'node-0', since: Date.parse('2026-12-02T15:00:00Z') },
      { node: 'node-1', since: Date.parse('2026-12-02T15:01:00Z') },
    ]);
  });

  it(`waits up to ${KUBELET_START_WAIT_S} s from the kubelet's start, longer than --ready-timeout; --ready-timeout 0 checks once`, () => {
    const now = Date.parse('2026-12-02T15:00:00Z');
    const deadline = now + 60_000;
    const justStarted = [{ node: 'node-1', since: now - 5_000 }];
    expect(readyDeadline(deadline, 60, justStarted)).toBe(now - 5_000 + KUBELET_START_WAIT_S * 1000);
    expect(readyDeadline(deadline, 60, [])).toBe(deadline);
    // Started long ago: the kubelet's own time is up, --ready-timeout still applies.
    expect(readyDeadline(deadline, 60, [{ node: 'node-1', since: now - 3_600_000 }])).toBe(deadline);
    expect(readyDeadline(now, 0, justStarted)).toBe(now);
  });

  it('when it gives up, says the kubelet is still starting and what to run to check again', () => {
    const json = JSON.stringify({ items: [starting('node-1', '2026-12-02T15:00:00Z')] });
    expect(nodeStates(objectItems(json), ['node-1'])).toEqual([
      `node node-1 is not Ready yet: its kubelet is still starting (${PLEG}); verify waits up to ${KUBELET_START_WAIT_S} s from its start. ` +
        'Check again with "hardway verify" (or "hardway doctor --node node-1")',
    ]);
  });
});
