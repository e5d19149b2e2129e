// The systemd services hardway runs are named once, by the step that runs each (the step table of command-table.ts):
// the components' lists, verify, doctor (its checks, fixes and bundle) derive theirs from there.
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { API_PROXY_SERVICE } from '../../src/render/worker.ts';
import { ROUTES_SERVICE } from '../../src/render/routes.ts';
import { CONTROL_PLANE_SERVICES, SERVICE_STEPS, servicesOfStep, WORKER_SERVICES } from '../../src/command-table.ts';
import * as components from '../../src/steps/support/components.ts';

const SRC = resolve(import.meta.dirname, '../../src');
const filesOf = (dir: string): string[] => readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? filesOf(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));

describe('services, defined once', () => {
  it('each by the step that runs it; the lists derived from the step table', () => {
    expect([...SERVICE_STEPS]).toEqual([
      ['etcd', 'bootstrap-etcd'],
      ['kube-apiserver', 'bootstrap-control-plane'], ['kube-controller-manager', 'bootstrap-control-plane'], ['kube-scheduler', 'bootstrap-control-plane'],
      ['containerd', 'containerd'], ['haproxy', 'api-proxy'], ['kubelet', 'kubelet'], ['kube-proxy', 'kube-proxy'], ['hardway-pod-forwarding', 'pod-forwarding'], ['hardway-pod-routes', 'routes'],
    ]);
    expect(WORKER_SERVICES).toEqual(['containerd', 'kubelet', 'kube-proxy']);
    expect(CONTROL_PLANE_SERVICES).toEqual(['kube-apiserver', 'kube-controller-manager', 'kube-scheduler']);
    expect(components.WORKER_SERVICES).toBe(WORKER_SERVICES);
    expect(servicesOfStep('routes')).toEqual([ROUTES_SERVICE]);
    expect(servicesOfStep('api-proxy')).toEqual([API_PROXY_SERVICE]);
  });

  it('no list of the worker or control-plane services is typed anywhere else in src/', () => {
    const lists = filesOf(SRC).filter((f) => !f.endsWith('command-table.ts')).flatMap((file) =>
      readFileSync(file, 'utf8').split('\n').flatMap((line, i) =>
        [/'containerd', 'kubelet', 'kube-proxy'/, /'kube-apiserver', 'kube-controller-manager', 'kube-scheduler'\]/, /containerd: 'containerd', kubelet: 'kubelet'/].some((re) => re.test(line)) ? [`${file.slice(SRC.length + 1)}:${i + 1}`] : []));
    expect(lists).toEqual([]);
  });
});
