// verify's reading of `kubectl get nodes -o json`: a worker that never registered and one that is
// NotReady are told apart, with the kubelet's own reason, and Ready workers give no problem.
import { describe, expect, it } from 'vitest';
import { nodeStates } from '../../src/steps/verify.ts';

const node = (name: string, status?: string, message?: string) => ({
  metadata: { name },
  status: { conditions: status ? [{ type: 'MemoryPressure', status: 'False' }, { type: 'Ready', status, message }] : undefined },
});

describe('verify: node states from the API', () => {
  it('names a missing node and a NotReady node with its reason', () => {
    const json = JSON.stringify({ items: [node('node-0', 'True'), node('node-1', 'Unknown', 'Kubelet stopped posting node status.')] });
    expect(nodeStates(json, ['node-0', 'node-1', 'node-2'])).toEqual([
      'node node-1 is not Ready (Kubelet stopped posting node status.)',
      'node node-2 is not registered with the API (its kubelet never reached the API server)',
    ]);
  });

  it('all Ready: no problem', () => {
    expect(nodeStates(JSON.stringify({ items: [node('node-0', 'True'), node('node-1', 'True')] }), ['node-0', 'node-1'])).toEqual([]);
  });

  it('a node with no conditions yet is not Ready', () => {
    expect(nodeStates(JSON.stringify({ items: [node('node-0')] }), ['node-0'])).toEqual(['node node-0 is not Ready']);
  });
});
