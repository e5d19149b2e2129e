// One worker component as a step: its binaries from downloads/, its rendered files, and its
// service, restarted only when one of its own inputs changed. containerd, the CNI plugins, the
// kubelet and kube-proxy are each one such step, so each reruns alone and each checks only the
// binaries it needs.
import type { DesiredFile } from '../../engine/desired.ts';
import type { ProbeAnswer, ProbeRequest } from '../../probes/probe.ts';
import type { Change, ChangeStep, StepContext } from '../../engine/types.ts';
import type { WorkerComponentName } from '../../render/types.ts';
import { WORKER } from '../../layout.ts';
import { binaryFiles, cniPluginFiles, hasBinary } from './binaries.ts';
import { renderedFor } from './rendered.ts';
import { withServiceChanges } from './services.ts';
import { fileChangesFrom, inspect } from './inspect.ts';
import { RESOLVED_SERVICE, workerRenderOptions } from './worker-render.ts';

/** What makes up one worker component. */
export interface WorkerComponent {
  /** The step's name, which is also the tag of the rendered files it owns. */
  name: WorkerComponentName;
  title: string;
  /** Binaries from downloads/ into /usr/local/bin; each restarts `service` when it changes. */
  binaries: string[];
  /** Binaries installed when downloads/ has them (tools, not needed to run the component). */
  optionalBinaries?: string[];
  /** CNI plugins that must be present; every plugin in downloads/cni-plugins is installed. */
  cniPlugins?: readonly string[];
  /** The systemd service it runs, if any. */
  service?: string;
  /**
   * What the component wrote on an earlier run and no longer wants (certs.d directories of
   * registries gone from cluster.yaml): a probe asked in the same inspection, and the changes that
   * remove them, given its answer and the paths the component installs now.
   */
  leftovers?: { probe: ProbeRequest<ProbeAnswer>; changes(answer: ProbeAnswer, installed: readonly string[]): Change[] };
}

/** Builds the step for a worker component. */
export function workerComponentStep(c: WorkerComponent): ChangeStep {
  return {
    name: c.name,
    title: c.title,
    targets: (inv) => inv.workers,
    async plan(ctx: StepContext): Promise<Change[]> {
      const { inventory, machine, facts } = ctx;
      const optional = (c.optionalBinaries ?? []).filter((b) => hasBinary(inventory.dir, b));
      const binaries: DesiredFile[] = await binaryFiles(inventory.dir, [...c.binaries, ...optional], WORKER.bin);
      if (c.cniPlugins) binaries.push(...(await cniPluginFiles(inventory.dir, c.cniPlugins, WORKER.cniBin)));
      // Which files a component has does not depend on the machine's facts, only their content does.
      const paths = renderedFor(inventory, machine, c.name).files.map((f) => f.path);
      const services = c.service ? [c.service] : [];
      const probes: Record<string, ProbeRequest<ProbeAnswer>> = c.leftovers ? { leftovers: c.leftovers.probe } : {};
      const found = await inspect(facts, [...binaries.map((b) => b.path), ...paths], [...services, RESOLVED_SERVICE], probes);
      const rendered = renderedFor(inventory, machine, c.name, workerRenderOptions(inventory, found.services.get(RESOLVED_SERVICE)?.active));
      const removals = c.leftovers ? c.leftovers.changes(found.probes.leftovers!, paths) : [];
      const changes = [...fileChangesFrom(found, [...binaries, ...rendered.files]), ...removals];
      if (!c.service) return changes;
      const inputs = [...rendered.inputs, ...c.binaries.map((b) => ({ path: `${WORKER.bin}/${b}`, services: [c.service!] }))];
      return withServiceChanges(found.services, services, inputs, changes);
    },
  };
}
