// Rendering one machine: pure (inventory and options in, files out), so the steps, the render
// command and the golden tests all see the same bytes.
import type { Inventory, Machine } from '../inventory.ts';
import { renderControlPlane } from './control-plane.ts';
import { renderHostsBlocks } from './hosts.ts';
import { kubernetesDifferences, supportedKubernetes } from './kubernetes-version.ts';
import { renderPodForwarding } from './pod-forwarding.ts';
import { renderRoutes } from './routes.ts';
import { renderEtcdSnapshots } from './etcd-snapshots.ts';
import { sharedTemplateSet } from './templates.ts';
import type { RenderedFile, RenderOptions } from './types.ts';
import { renderWorker } from './worker.ts';

export type { KubernetesChoice, RenderedFile, RenderOptions, RenderStep } from './types.ts';

/**
 * Renders already made in this process, by inventory object, then machine and options. Each step
 * asks for one machine's files in its plan and re-plan, and rendering the whole machine each time
 * was the largest CPU cost of a no-op `up` per machine (about 60 ms of 1+2's 1.5 s). Nothing
 * mutates a loaded inventory, so the same object renders the same bytes; a reloaded one is new.
 */
const renders = new WeakMap<Inventory, Map<string, RenderedFile[]>>();

/**
 * Every file hardway renders for `machine`, in install order; throws InputError for a Kubernetes
 * release outside SUPPORTED_KUBERNETES (before rendering anything) and FailureError on a template problem.
 * Callers get their own array of the files (the files themselves are shared: do not change them).
 */
export function renderMachine(inv: Inventory, machine: Machine, opts: RenderOptions = {}): RenderedFile[] {
  let byKey = renders.get(inv);
  if (!byKey) renders.set(inv, (byKey = new Map()));
  const key = JSON.stringify([machine, opts]);
  let files = byKey.get(key);
  if (!files) byKey.set(key, (files = renderFresh(inv, machine, opts)));
  return [...files];
}

function renderFresh(inv: Inventory, machine: Machine, opts: RenderOptions): RenderedFile[] {
  const k8s = opts.kubernetes ?? { version: inv.settings.versions.kubernetes, from: 'versions.kubernetes in cluster.yaml' };
  const differences = kubernetesDifferences(supportedKubernetes(k8s.version, k8s.from));
  const templates = sharedTemplateSet(opts.templateRoot);
  return [
    ...renderHostsBlocks(inv),
    ...(machine.role === 'control-plane'
      ? renderControlPlane(inv, machine, templates, differences)
      : renderWorker(inv, machine, templates, opts, differences)),
    ...renderPodForwarding(inv, machine, templates),
    ...renderRoutes(inv, machine, templates),
    ...renderEtcdSnapshots(inv, machine, templates),
  ];
}
