// From `multipass up` options to the VMs: Multipass names, machine names, roles and pod subnets,
// the same machines `hardway lab up` makes (server or server-N, node-0...). Pure.
import { InputError } from '../errors.ts';
import { LAB_DOMAIN, serverNames } from '../lab/plan.ts';
import { PREFIX, vmName } from './names.ts';
import type { MultipassSpec, PlannedVm } from './types.ts';

/** Most control-plane VMs: more than a few is not what a laptop runs. */
export const MAX_SERVERS = 9;
/** Most workers (worker N gets pod subnet 10.200.N.0/24). */
export const MAX_WORKERS = 100;
/** Most CPUs per VM. */
export const MAX_CPUS = 64;
/** Longest --timeout, in seconds. */
export const MAX_TIMEOUT_S = 3600;

// Multipass takes sizes as bytes or decimals with a K, M or G suffix (`multipass help launch`).
const SIZE = /^\d+(\.\d+)?([KMG](i?B)?)?$/i;

/** Validates a spec; every problem is an InputError saying what to pass instead. */
export function checkSpec(spec: MultipassSpec): void {
  if (!PREFIX.test(spec.prefix)) {
    throw new InputError(`--name "${spec.prefix}" is not allowed`,
      'use 1-32 lower-case letters, digits and "-", starting with a letter (the VMs are named <name>-server, <name>-node-0...), e.g. --name k8s');
  }
  const count = (what: string, n: number, min: number, max: number) => {
    if (!Number.isInteger(n) || n < min || n > max) throw new InputError(`--${what} must be a whole number from ${min} to ${max}, got ${n}`);
  };
  count('servers', spec.servers, 1, MAX_SERVERS);
  count('workers', spec.workers, 0, MAX_WORKERS);
  count('cpus', spec.cpus, 1, MAX_CPUS);
  count('timeout', spec.timeoutS, 1, MAX_TIMEOUT_S);
  for (const [what, v] of [['memory', spec.memory], ['disk', spec.disk]] as const) {
    if (!SIZE.test(v)) throw new InputError(`--${what} "${v}" is not a size Multipass takes`, `write a number with K, M or G, e.g. --${what} ${what === 'memory' ? '2G' : '20G'}`);
  }
  if (!/^\S+$/.test(spec.image)) throw new InputError(`--vm-image "${spec.image}" is not an image name`, 'e.g. --vm-image 24.04 (see "multipass find")');
}

/** The VMs of a prefix: servers first, then workers node-0... with pod subnets 10.200.N.0/24. */
export function planVms(prefix: string, servers: number, workers: number): PlannedVm[] {
  const vm = (hostname: string, role: PlannedVm['role']): PlannedVm =>
    ({ vm: vmName(prefix, hostname), hostname, fqdn: `${hostname}.${LAB_DOMAIN}`, role });
  return [
    ...serverNames(servers).map((h) => vm(h, 'control-plane')),
    ...Array.from({ length: workers }, (_, i) => ({ ...vm(`node-${i}`, 'worker'), podSubnet: `10.200.${i}.0/24` })),
  ];
}
