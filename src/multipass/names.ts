// Names and places of `hardway multipass`: the prefix every VM name starts with, the default
// directory of the files it writes, and where the record of the VMs it launched is kept.
import { homedir } from 'node:os';
import { join } from 'node:path';

/** Default --name: the prefix of every VM name (hardway-server, hardway-node-0...). */
export const DEFAULT_PREFIX = 'hardway';

/** A prefix: Multipass names start with a letter and hold letters, digits and '-'; ours are lower case and short. */
export const PREFIX = /^[a-z]([a-z0-9-]{0,30}[a-z0-9])?$/;

/** The Multipass name of the VM that is `hostname` in machines.txt. */
export function vmName(prefix: string, hostname: string): string {
  return `${prefix}-${hostname}`;
}

/** The default output directory: ./multipass for the default prefix, ./multipass-<prefix> otherwise. */
export function defaultDir(prefix: string): string {
  return prefix === DEFAULT_PREFIX ? 'multipass' : `multipass-${prefix}`;
}

/**
 * Where the records of launched VMs live: $HARDWAY_MULTIPASS_STATE, else
 * ${XDG_STATE_HOME:-~/.local/state}/hardway/multipass. Multipass VMs belong to the host, not to a
 * directory, so `status` and `down` find them from anywhere.
 */
export function defaultStateDir(env: NodeJS.ProcessEnv): string {
  if (env.HARDWAY_MULTIPASS_STATE) return env.HARDWAY_MULTIPASS_STATE;
  const base = env.XDG_STATE_HOME && env.XDG_STATE_HOME.startsWith('/') ? env.XDG_STATE_HOME : join(homedir(), '.local', 'state');
  return join(base, 'hardway', 'multipass');
}
