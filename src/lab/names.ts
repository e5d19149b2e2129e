// Where the lab keeps things on the host and how host-wide names are derived from a lab name.
import { join } from 'node:path';
import { cacheRoot } from '../download/cache.ts';

/** Default lab name, and the directory it writes to when --dir is not given. */
export const DEFAULT_LAB = 'lab';

/** Host locations the lab uses; passed in so tests and benchmarks can choose their own. */
export interface LabPaths {
  /** Per-lab state: overlays, pids, console logs, state.json. */
  stateRoot: string;
  /** Cached root filesystems (survive `lab down`). */
  cacheRoot: string;
}

/** The standard locations: /var/lib/hardway/labs and ${XDG_CACHE_HOME:-~/.cache}/hardway. */
export function defaultLabPaths(env: NodeJS.ProcessEnv): LabPaths {
  return { stateRoot: env.HARDWAY_LAB_STATE ?? '/var/lib/hardway/labs', cacheRoot: cacheRoot(env) };
}

/** A lab name: lower-case letters, digits and '-', at most 12 characters (the bridge name is hw-<name>). */
export const LAB_NAME = /^[a-z0-9]([a-z0-9-]{0,10}[a-z0-9])?$/;

/** Linux interface names are at most 15 characters: hw- plus a name of at most 12. */
export function bridgeName(lab: string): string {
  return `hw-${lab}`;
}

/** The systemd-nspawn machine name: unique across labs on the host; the hostname inside stays short. */
export function unitName(lab: string, hostname: string): string {
  return `${lab}-${hostname}`;
}

/** The default output directory for a lab: ./lab for the default lab, ./lab-<name> otherwise. */
export function defaultDir(lab: string): string {
  return lab === DEFAULT_LAB ? 'lab' : `lab-${lab}`;
}

/** Directory of one lab's state. */
export function labDir(paths: LabPaths, lab: string): string {
  return join(paths.stateRoot, lab);
}

/** Directory of one machine's overlay, pid file and console log. */
export function machineDir(paths: LabPaths, lab: string, hostname: string): string {
  return join(paths.stateRoot, lab, 'machines', hostname);
}
