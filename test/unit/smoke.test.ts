// The smoke test's pod choice: the pod's own node (not the list's), and never a Terminating pod
// of an earlier run's ReplicaSet (both seen on a real cluster).
import { describe, expect, it } from 'vitest';
import { runningPod } from '../../src/steps/smoke.ts';

describe('smoke: which pod is checked', () => {
  it("takes the node from the pod's own spec", () => {
    expect(runningPod('hardway-smoke-5f7b-abcde   node-1   Running   <none>\n')).toEqual({ pod: 'hardway-smoke-5f7b-abcde', node: 'node-1' });
  });

  it('skips a pod being deleted and one not yet on a node or Running', () => {
    const listing = [
      'hardway-smoke-old-aaaaa   node-0   Running   2026-12-01T00:00:00Z',
      'hardway-smoke-new-ccccc   <none>   Pending   <none>',
      'hardway-smoke-new-bbbbb   node-1   Running   <none>',
    ].join('\n');
    expect(runningPod(listing)).toEqual({ pod: 'hardway-smoke-new-bbbbb', node: 'node-1' });
  });

  it('finds nothing when no pod runs', () => {
    expect(runningPod('')).toBeUndefined();
    expect(runningPod('hardway-smoke-x   node-0   ContainerCreating   <none>')).toBeUndefined();
  });
});
