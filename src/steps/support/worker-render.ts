// Rendering a worker's files with what only the machine and downloads/ know: which containerd
// (its config schema depends on the version) and which resolver file the kubelet should use.
import type { Inventory } from '../../inventory.ts';
import type { RenderOptions } from '../../render/machine.ts';
import { downloadedVersion } from './binaries.ts';

/**
 * The service whose state picks the kubelet's resolver file: asked with the component's own
 * service states (one `systemctl show` for all, not a systemctl of its own).
 */
export const RESOLVED_SERVICE = 'systemd-resolved';

/**
 * The containerd whose config schema a worker gets: the one in downloads/ (what `bootstrap-workers`
 * installs), else the version in cluster.yaml. `hardway render` and the steps both use this, so the
 * rendered tree shows exactly what the machines get.
 */
export function containerdRenderOptions(inv: Inventory): Pick<RenderOptions, 'containerdMajor' | 'containerdMinor'> {
  const m = /^v?(\d+)\.(\d+)/.exec(downloadedVersion(inv.dir, 'containerd') ?? '');
  return m ? { containerdMajor: Number(m[1]), containerdMinor: Number(m[2]) } : {};
}

/** Render options for a worker: containerd from containerdRenderOptions, resolver from RESOLVED_SERVICE's ActiveState. */
export function workerRenderOptions(inv: Inventory, resolvedState: string | undefined): RenderOptions {
  // Where systemd-resolved runs, /etc/resolv.conf points at its stub (127.0.0.53), useless inside pods.
  const resolvConf = resolvedState === 'active' ? '/run/systemd/resolve/resolv.conf' : '/etc/resolv.conf';
  return { ...containerdRenderOptions(inv), resolvConf };
}
