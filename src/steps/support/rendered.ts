// The rendered files a step installs on a machine, as desired files plus their service inputs.
import type { DesiredFile } from '../../engine/desired.ts';
import type { Inventory, Machine } from '../../inventory.ts';
import { renderMachine, type RenderedFile, type RenderOptions } from '../../render/machine.ts';
import { kubernetesToRender } from './kubernetes-version.ts';
import type { ServiceInput } from './services.ts';

/**
 * The rendered files one step owns (whole files only; marked blocks are merged by pin-hosts), for the
 * Kubernetes release in downloads/ (kubernetesToRender) unless `opts` names one.
 */
export function renderedFor(
  inv: Inventory,
  machine: Machine,
  step: RenderedFile['step'],
  opts: RenderOptions = {},
): { files: DesiredFile[]; inputs: ServiceInput[] } {
  const rendered = renderMachine(inv, machine, { kubernetes: kubernetesToRender(inv), ...opts }).filter((f) => f.step === step && f.mergeInto === undefined);
  return {
    files: rendered.map((f) => ({ path: f.path, content: Buffer.from(f.content), mode: f.mode })),
    inputs: rendered.map((f) => ({ path: f.path, services: f.services })),
  };
}
