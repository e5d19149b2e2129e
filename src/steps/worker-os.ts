// worker-os: what a worker's OS must give Kubernetes before any component runs: the packages
// kube-proxy and the kubelet call, and haproxy with several control planes (api-proxy runs it),
// checked first, so a machine that has them needs no internet; swap off and kept off,
// br_netfilter (loaded, or built into the kernel: then only its sysctls exist), and the bridge and
// forwarding sysctls, persisted in one file each (never appended).
import { severalControlPlanes } from '../api-endpoints.ts';
import { installedPackages, fstabSwapLines, brNetfilterPresent, swapDevices, sysctls } from '../probes/system.ts';
import type { Inventory } from '../inventory.ts';
import { fileChangesFrom, inspect } from './support/inspect.ts';
import type { Change, ChangeStep, StepContext } from '../engine/types.ts';
import { WORKER } from '../layout.ts';
import { sh } from '../shell.ts';
import { renderedFor } from './support/rendered.ts';
import { WORKER_SYSCTLS } from './support/components.ts';
import { FSTAB_SWAP_NOTE, HARDWAY_DIR, PACKAGES_RECORD, SWAP_MASK_RECORD } from './support/installed.ts';

/** Debian packages a worker needs (iptables for kube-proxy's iptables mode: the tutorial forgets it). */
export const WORKER_PACKAGES = ['socat', 'conntrack', 'ipset', 'kmod', 'iptables'];

/** The packages this cluster's workers need: with several control planes, haproxy too (the api-proxy step runs it). */
export function workerPackages(inv: Inventory): string[] {
  return severalControlPlanes(inv) ? [...WORKER_PACKAGES, 'haproxy'] : WORKER_PACKAGES;
}

/** The unit worker-os masks so that systemd activates no swap at boot. */
const SWAP_TARGET = 'swap.target';

/** The worker-os step. */
export const workerOsStep: ChangeStep = {
  name: 'worker-os',
  title: 'Prepare the worker OS: packages, swap off, br_netfilter, sysctls',
  targets: (inv) => inv.workers,
  async plan(ctx: StepContext): Promise<Change[]> {
    const { inventory, machine, facts } = ctx;
    const packages = workerPackages(inventory);
    const { files } = renderedFor(inventory, machine, 'worker-os');
    // swap.target's mask is read with every step's services in the one `systemctl show`.
    const found = await inspect(facts, files.map((f) => f.path), [SWAP_TARGET], {
      // One dpkg-query for every package (one it does not know is left out of its answer).
      packages: installedPackages.ask(packages),
      swap: swapDevices.ask(),
      fstab: fstabSwapLines.ask(),
      bridge: brNetfilterPresent.ask(),
      sysctls: sysctls.ask(WORKER_SYSCTLS),
    });
    const p = found.probes;
    const changes: Change[] = [];
    const missing = packages.filter((pkg) => !p.packages.has(pkg));
    if (missing.length > 0) {
      changes.push({
        kind: 'exec',
        // What is new after the install (the named packages and what apt pulled in) is recorded, so
        // reset removes exactly that and no package the machine had before.
        cmd: sh`export DEBIAN_FRONTEND=noninteractive; had=$(dpkg-query -W -f='\${Package}\\n'); apt-get update -qq && apt-get install -y -qq ${missing} && mkdir -p ${HARDWAY_DIR} && { dpkg-query -W -f='\${Package}\\n' | grep -vxF "$had" || true; } >> ${PACKAGES_RECORD}`,
        reason: `packages missing: ${missing.join(', ')}`,
      });
    }
    if (p.swap.length) changes.push({ kind: 'exec', cmd: sh`swapoff -a`, reason: `swap is on (${p.swap.join(', ')})` });
    if (p.fstab > 0) {
      changes.push({
        kind: 'exec',
        cmd: sh`sed -i -E ${`s/^([[:space:]]*[^#[:space:]]+[[:space:]]+[^[:space:]]+[[:space:]]+swap[[:space:]].*)$/# \\1${FSTAB_SWAP_NOTE}/`} /etc/fstab`,
        reason: 'swap listed in /etc/fstab would come back at boot',
      });
    }
    if (found.services.get(SWAP_TARGET)?.enabled !== 'masked') {
      // With systemd's reload (once, when the mask is made): the mask is read back from `systemctl
      // show`, which without a reload still says the state before (the second plan of a real run
      // planned the mask again). The record lets reset unmask only a mask hardway made.
      changes.push({ kind: 'exec', cmd: sh`systemctl mask swap.target && mkdir -p ${HARDWAY_DIR} && touch ${SWAP_MASK_RECORD}`, reason: 'keep systemd from activating swap units' });
    }
    if (!p.bridge) {
      changes.push({ kind: 'exec', cmd: sh`modprobe br_netfilter`, reason: 'br_netfilter is not loaded' });
    }
    const fileWork = fileChangesFrom(found, files);
    changes.push(...fileWork);
    // The settings there are, in the order of WORKER_SYSCTLS (a key that does not exist has none).
    const values = WORKER_SYSCTLS.flatMap((k) => (p.sysctls.has(k) ? [p.sysctls.get(k)!] : []));
    if (fileWork.some((c) => c.kind === 'put' && c.path === WORKER.sysctl) || values.length !== WORKER_SYSCTLS.length || values.some((v) => v.trim() !== '1')) {
      changes.push({ kind: 'exec', cmd: sh`sysctl -q -p ${WORKER.sysctl}`, reason: `apply ${WORKER.sysctl} (now: ${values.join(' ') || 'unset'})` });
    }
    return changes;
  },
};
