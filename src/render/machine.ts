// Rendering one machine: pure (inventory and options in, files out), so the steps, the render
// command and the golden tests all see the same bytes.
import type { Inventory, Machine } from '../inventory.ts';
import { renderControlPlane } from './control-plane.ts';
import { renderHostsBlocks } from './hosts.ts';
import { kubernetesDifferences, supportedKubernetes } from './kubernetes-version.ts';
import { renderRoutes } from './routes.ts';
import { sharedTemplateSet } from './templates.ts';
import type { RenderedFile, RenderOptions } from './types.ts';
import { renderWorker } from './worker.ts';

export type { KubernetesChoice, RenderedFile, RenderOptions, RenderStep } from './types.ts';

/**
 * Every file hardway renders for `machine`, in install order; throws InputError for a Kubernetes
 * release outside SUPPORTED_KUBERNETES (before rendering anything) and FailureError on a template problem.
 */
export function renderMachine(inv: Inventory, machine: Machine, opts: RenderOptions = {}): RenderedFile[] {
  const k8s = opts.kubernetes ?? { version: inv.settings.versions.kubernetes, from: 'versions.kubernetes in cluster.yaml' };
  const differences = kubernetesDifferences(supportedKubernetes(k8s.version, k8s.from));
  const templates = sharedTemplateSet(opts.templateRoot);
  return [
    ...renderHostsBlocks(inv),
    ...(machine.role === 'control-plane'
      ? renderControlPlane(inv, machine, templates, differences)
      : renderWorker(inv, machine, templates, opts, differences)),
    ...renderRoutes(inv, machine, templates),
  ];
}
