// The smoke test's pod choice: the pod's own node (not the list's), and never a Terminating pod
// of an earlier run's ReplicaSet (both seen on a real cluster).
import { describe, expect, it } from 'vitest';
import { runningPod, smokeStep, storedKey } from '../../src/steps/smoke.ts';
import { podEventReasons } from '../../src/steps/support/pod-events.ts';

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

describe('smoke: why the deployment did not roll out, from its pods\' events', () => {
  const event = (pod: string, type: string, reason: string, message: string, at: string) =>
    ({ involvedObject: { kind: 'Pod', name: pod }, type, reason, message, lastTimestamp: at });
  it("names each pod's last Warning event (else its last event), a pod without events, and no pod at all", () => {
    const sandbox = 'Failed to create pod sandbox: rpc error: code = Unknown desc = failed to get sandbox image "localhost/hardway/pause:1": failed to pull image';
    const events = JSON.stringify({ items: [
      event('hardway-smoke-1-a', 'Normal', 'Scheduled', 'Successfully assigned default/hardway-smoke-1-a to node-0', '2026-12-02T15:00:00Z'),
      event('hardway-smoke-1-a', 'Warning', 'FailedCreatePodSandBox', `${sandbox}\nmore`, '2026-12-02T15:00:05Z'),
      event('hardway-smoke-1-a', 'Normal', 'SandboxChanged', 'Pod sandbox changed, it will be killed and re-created.', '2026-12-02T15:00:06Z'),
      event('hardway-smoke-1-b', 'Normal', 'Scheduled', 'Successfully assigned default/hardway-smoke-1-b to node-1', '2026-12-02T15:00:00Z'),
      event('other', 'Warning', 'BackOff', 'x', '2026-12-02T15:00:00Z'),
    ] });
    expect(podEventReasons(['hardway-smoke-1-a', 'hardway-smoke-1-b', 'hardway-smoke-1-c'], events)).toEqual([
      `hardway-smoke-1-a: FailedCreatePodSandBox: ${sandbox}`,
      'hardway-smoke-1-b: Scheduled: Successfully assigned default/hardway-smoke-1-b to node-1',
      'hardway-smoke-1-c: no events',
    ]);
    expect(podEventReasons([], events)).toEqual(['no pod of the deployment exists (its ReplicaSet could not create one)']);
  });
});

describe('smoke: a deployment that does not roll out', () => {
  it("fails with kubectl's words and each pod's event reason, not only \"timed out waiting for the condition\"", async () => {
    const { FakeTransport } = await import('../fixtures/fake-transport.ts');
    const { inventoryOf, stepOptions } = await import('./engine.helpers.ts');
    const inv = inventoryOf();
    const t = new FakeTransport('server');
    const ok = (stdout = '') => () => ({ code: 0, stdout, stderr: '' });
    const events = { items: [{ involvedObject: { kind: 'Pod', name: 'hardway-smoke-7d-x' }, type: 'Warning', reason: 'FailedCreatePodSandBox', message: 'failed to get sandbox image "localhost/hardway/pause:1"', lastTimestamp: '2026-12-02T15:00:05Z' }] };
    t.handlers.push(
      [/rollout status deployment\/hardway-smoke/, () => ({ code: 1, stdout: '', stderr: 'error: timed out waiting for the condition\n' })],
      [/get pods -l app=hardway-smoke -o 'jsonpath=\{\.items\[\*\]\.metadata\.name\}'/, ok('hardway-smoke-7d-x')],
      [/get events --field-selector involvedObject\.kind=Pod -o json/, ok(JSON.stringify(events))],
      [/etcdctl/, ok('k8s:enc:aescbc:v1:key1:\\0')],
      [/kubectl/, ok()],
    );
    const log = { info: () => undefined, debug: () => undefined };
    const run = smokeStep.run({ host: 'server', inventory: inv, machine: inv.controlPlanes[0]!, facts: undefined as never, options: stepOptions(), log, transport: t });
    await expect(run).rejects.toThrow('smoke test: deployment hardway-smoke did not roll out (error: timed out waiting for the condition):\n' +
      '  - hardway-smoke-7d-x: FailedCreatePodSandBox: failed to get sandbox image "localhost/hardway/pause:1"');
  });
});

describe('smoke: the secret stored encrypted', () => {
  // As `etcdctl get | od -An -c | tr -d ' \n'` shows a value: printable characters as they are, others as \0 or octal.
  const shown = (key: string) => `/registry/secrets/default/hardway-smoke\\nk8s:enc:aescbc:v1:${key}:\\0302\\t\\0`;

  it('finds the key it is stored under: key1 at first, another after a rotation', () => {
    expect(storedKey(shown('key1'))).toBe('key1');
    expect(storedKey(shown('key2'))).toBe('key2');
  });

  it('finds none for a value stored in the clear (identity) or under another provider', () => {
    expect(storedKey('/registry/secrets/default/hardway-smoke\\nk8s\\0\\n\\fv1Secret')).toBeUndefined();
    expect(storedKey(`/registry/secrets/default/hardway-smoke\\nk8s:enc:secretbox:v1:key1:\\0`)).toBeUndefined();
  });

  it('passes the check after a rotation (key2) and waits --rollout-timeout for the deployment', async () => {
    const { FakeTransport } = await import('../fixtures/fake-transport.ts');
    const { inventoryOf, stepOptions } = await import('./engine.helpers.ts');
    const inv = inventoryOf();
    const t = new FakeTransport('server');
    const info: string[] = [];
    t.handlers.push(
      [/rollout status deployment\/hardway-smoke --timeout=45s/, () => ({ code: 1, stdout: '', stderr: 'error: timed out waiting for the condition\n' })],
      [/etcdctl/, () => ({ code: 0, stdout: shown('key2'), stderr: '' })],
      [/kubectl/, () => ({ code: 0, stdout: '', stderr: '' })],
    );
    const log = { info: (m: string) => void info.push(m), debug: () => undefined };
    const run = smokeStep.run({ host: 'server', inventory: inv, machine: inv.controlPlanes[0]!, facts: undefined as never, options: stepOptions({ values: { 'rollout-timeout': '45' } }), log, transport: t });
    await expect(run).rejects.toThrow('did not roll out (error: timed out waiting for the condition)');
    expect(info).toContain('secret stored encrypted in etcd (k8s:enc:aescbc:v1:key2)');
  });
});
