// Rendering a worker's files with what only the machine and downloads/ know: which containerd
// (its config schema depends on the version) and which resolver file the kubelet should use.
import type { ProbeResult } from '../../engine/facts.ts';
import type { Inventory } from '../../inventory.ts';
import type { RenderOptions } from '../../render/machine.ts';
import { sh } from '../../shell.ts';
import { downloadedVersion } from './binaries.ts';

/** Asks whether systemd-resolved runs (answer for workerRenderOptions). */
export const RESOLVED_PROBE = sh`systemctl is-active systemd-resolved 2>/dev/null`;

/** Render options for a worker: containerd version from downloads/, resolver from the RESOLVED_PROBE answer. */
export function workerRenderOptions(inv: Inventory, resolved: ProbeResult): RenderOptions {
  const opts: RenderOptions = {};
  const version = downloadedVersion(inv.dir, 'containerd');
  const m = version ? /^v?(\d+)\.(\d+)/.exec(version) : null;
  if (m) {
    opts.containerdMajor = Number(m[1]);
    opts.containerdMinor = Number(m[2]);
  }
  // Where systemd-resolved runs, /etc/resolv.conf points at its stub (127.0.0.53), useless inside pods.
  opts.resolvConf = resolved.stdout.trim() === 'active' ? '/run/systemd/resolve/resolv.conf' : '/etc/resolv.conf';
  return opts;
}
