// Rendering one machine: pure (inventory and options in, files out), so the steps, the render
// command and the golden tests all see the same bytes.
import type { Inventory, Machine } from '../inventory.ts';
import { renderControlPlane } from './control-plane.ts';
import { renderHostsBlocks } from './hosts.ts';
import { renderRoutes } from './routes.ts';
import { sharedTemplateSet } from './templates.ts';
import type { RenderedFile, RenderOptions } from './types.ts';
import { renderWorker } from './worker.ts';

export type { RenderedFile, RenderOptions, RenderStep } from './types.ts';

/** Every file hardway renders for `machine`, in install order; throws FailureError on a template problem. */
export function renderMachine(inv: Inventory, machine: Machine, opts: RenderOptions = {}): RenderedFile[] {
  const templates = sharedTemplateSet(opts.templateRoot);
  return [
    ...renderHostsBlocks(inv),
    ...(machine.role === 'control-plane'
      ? renderControlPlane(inv, machine, templates)
      : renderWorker(inv, machine, templates, opts)),
    ...renderRoutes(inv, machine, templates),
  ];
}
