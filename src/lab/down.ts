// `lab down`: stop every machine, unmount overlays, remove the bridge and the lab's state. Works
// from whatever a crashed `up` left: machines are found from state.json or from the directories.
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { FailureError } from '../errors.ts';
import { stopMachine } from './boot.ts';
import { releaseHostSettings } from './host-settings.ts';
import { mountsUnder, unmountAll } from './mounts.ts';
import { bridgeName, labDir, machineDir, unitName, type LabPaths } from './names.ts';
import { removeBridge } from './network.ts';
import { removeAbandonedBuilds } from './rootfs.ts';
import { listLabs, readState } from './state.ts';
import type { LabMachine } from './types.ts';

/** Takes one lab down completely; returns a line describing what was removed. Idempotent. */
export async function labDown(paths: LabPaths, lab: string): Promise<string> {
  const dir = labDir(paths, lab);
  const state = readState(paths, lab);
  const bridge = state?.plan.bridge ?? bridgeName(lab);
  const machines = knownMachines(paths, lab, state?.plan.machines ?? []);
  await Promise.all(machines.map((m) => stopMachine(machineDir(paths, lab, m.hostname), m)));
  if (existsSync(dir)) await unmountAll(dir);
  await removeBridge(bridge);
  const left = existsSync(dir) ? mountsUnder(dir) : [];
  if (left.length > 0) {
    throw new FailureError(`lab "${lab}": still mounted after unmounting: ${left.join(', ')}`,
      'something still uses these mounts; stop it and run hardway lab down again');
  }
  rmSync(dir, { recursive: true, force: true });
  const restored = await releaseHostSettings(dir);
  return [`lab "${lab}" is down: ${machines.length} machine(s) stopped, overlays unmounted, bridge ${bridge} removed`, ...restored].join('\n');
}

/** What `labDown` would do to a lab, for --dry-run: one line; nothing is changed. */
export function describeLabDown(paths: LabPaths, lab: string): string {
  const state = readState(paths, lab);
  const machines = knownMachines(paths, lab, state?.plan.machines ?? []);
  const files = state ? `; the files in ${state.plan.spec.dir} and the cached root stay` : '';
  return `lab "${lab}": would stop ${machines.length} machine(s) (${machines.map((m) => m.hostname).join(', ') || 'none'}), ` +
    `unmount their overlays, remove bridge ${state?.plan.bridge ?? bridgeName(lab)} and ${labDir(paths, lab)}${files}`;
}

/** Takes every lab on this host down, and removes root builds a crashed `up` abandoned (the cache stays). */
export async function labDownAll(paths: LabPaths): Promise<string[]> {
  const lines: string[] = [];
  for (const lab of listLabs(paths)) lines.push(await labDown(paths, lab));
  // Settings held by labs whose state is gone (a crash, a hand removal) are put back too.
  lines.push(...(await releaseHostSettings('')));
  await removeAbandonedBuilds(paths.cacheRoot);
  return lines;
}

// Machines of the state plus any machine directory a half-written state does not list yet.
function knownMachines(paths: LabPaths, lab: string, planned: LabMachine[]): LabMachine[] {
  const dir = join(labDir(paths, lab), 'machines');
  const extra = existsSync(dir)
    ? readdirSync(dir).filter((h) => !planned.some((m) => m.hostname === h))
    : [];
  return [
    ...planned,
    ...extra.map((hostname) => ({ hostname, fqdn: hostname, ip: '', role: 'worker' as const, unit: unitName(lab, hostname) })),
  ];
}
