// lab-registry: what the lab installs on its registry machine, as a step like any other: the plan
// reads the machine (the package's state, the config file, the service) through probes of the
// registry and returns the changes; the engine applies them, plans again (a rerun changes
// nothing), and --dry-run shows them. The .deb was put into the machine's root before it booted
// (stageRegistry): the machine has no route out, and dpkg runs the package's maintainer scripts
// under the machine's own systemd (user, enablement, start) as on any Debian host.
import type { Change, ChangeStep, StepContext } from '../engine/types.ts';
import { installedPackages } from '../probes/system.ts';
import { sh } from '../shell.ts';
import { fileChangesFrom, inspect } from '../steps/support/inspect.ts';
import { serviceChanges } from '../steps/support/services.ts';
import { REGISTRY_CONFIG, REGISTRY_DEB, REGISTRY_PACKAGE, registryConfig } from './registry.ts';

/**
 * dpkg -i of the staged package, keeping the config already in place (--force-confold): its
 * dependencies (adduser, lsb-base, libc6, init-system-helpers) are in the lab's root, and dpkg fails
 * loudly if that ever changes.
 */
export const INSTALL_REGISTRY = sh`DEBIAN_FRONTEND=noninteractive dpkg -i --force-confdef --force-confold ${REGISTRY_DEB}`;

/** The lab-registry step: docker-registry installed, configured, enabled and active on the registry machine. */
export const labRegistryStep: ChangeStep = {
  name: 'lab-registry',
  title: `${REGISTRY_PACKAGE} on the lab's registry machine (the staged .deb), configured, enabled and active`,
  // The lab runs this step over an inventory of its registry machine alone (registry-run.ts).
  targets: (inv) => inv.machines,
  async plan(ctx: StepContext): Promise<Change[]> {
    const found = await inspect(ctx.facts, [REGISTRY_CONFIG], [REGISTRY_PACKAGE], { installed: installedPackages.ask([REGISTRY_PACKAGE]) });
    // The config first: dpkg keeps it (--force-confold) and the service starts with it.
    const changes = fileChangesFrom(found, [{ path: REGISTRY_CONFIG, content: Buffer.from(registryConfig()), mode: 0o644 }]);
    if (!found.probes.installed.has(REGISTRY_PACKAGE)) changes.push({ kind: 'exec', cmd: INSTALL_REGISTRY, reason: `${REGISTRY_PACKAGE} is not installed` });
    // Enabled, and started (or restarted for a new config) until active; a failure shows its journal.
    changes.push(...serviceChanges(found.services, [REGISTRY_PACKAGE], [{ path: REGISTRY_CONFIG, services: [REGISTRY_PACKAGE] }], changes));
    return changes;
  },
};
