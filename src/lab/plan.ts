// From `lab up` options to the machines of the lab: names, addresses and pod subnets. Pure.
import { closest, didYouMean } from '../suggest.ts';
import { InputError } from '../errors.ts';
import { nthAddress, parseCidr, size, type Network } from '../net/ipv4.ts';
import { bridgeName, LAB_NAME, unitName } from './names.ts';
import { REGISTRY_HOSTNAME, REGISTRY_OFFSET } from './registry.ts';
import type { LabMachine, LabPlan, LabSpec } from './types.ts';

/** Offsets in the subnet: servers from .10, workers from .20 (as in Kubernetes the Hard Way). */
export const SERVER_OFFSET = 10;
export const WORKER_OFFSET = 20;
/** More servers would run into the workers' addresses. */
export const MAX_SERVERS = WORKER_OFFSET - SERVER_OFFSET;
/** The domain of every lab machine's FQDN. */
export const LAB_DOMAIN = 'kubernetes.local';

/** Server hostnames: `server` when there is one, `server-0`, `server-1`... when there are more. */
export function serverNames(count: number): string[] {
  return count === 1 ? ['server'] : Array.from({ length: count }, (_, i) => `server-${i}`);
}

/** Validates a spec and lays out its machines; every problem is an InputError saying what to do. */
export function planLab(spec: LabSpec): LabPlan {
  if (!LAB_NAME.test(spec.name)) {
    throw new InputError(`lab name "${spec.name}" is not allowed`,
      'use 1-12 lower-case letters, digits and "-" (the bridge is named hw-<name>), e.g. --name dev');
  }
  const count = (what: string, n: number, min: number, max: number) => {
    if (!Number.isInteger(n) || n < min || n > max)
      throw new InputError(`--${what} must be a whole number from ${min} to ${max}, got ${n}`);
  };
  count('servers', spec.servers, 1, MAX_SERVERS);
  count('workers', spec.workers, 0, 200);
  const r = parseCidr(spec.subnet);
  if (!r.ok) throw new InputError(`--subnet: ${r.reason}`, r.meant ? `did you mean ${r.meant}?` : 'write it as a.b.c.d/n, e.g. 10.240.0.0/24');
  const net: Network = r.net;
  const last = WORKER_OFFSET + spec.workers; // one past the last worker, must stay below broadcast
  if (net.prefix > 30 || last >= size(net) - 1) {
    throw new InputError(`--subnet ${spec.subnet} is too small for ${spec.servers} server(s) and ${spec.workers} worker(s)`,
      `the lab uses .1 for the host, .${SERVER_OFFSET}+ for servers and .${WORKER_OFFSET}+ for workers; use a /24`);
  }
  const machines: LabMachine[] = [];
  // Infrastructure first, at a fixed address below the servers, so cluster.yaml can name it.
  if (spec.registry) machines.push(machine(spec.name, REGISTRY_HOSTNAME, nthAddress(net, REGISTRY_OFFSET), 'registry'));
  serverNames(spec.servers).forEach((hostname, i) => {
    machines.push(machine(spec.name, hostname, nthAddress(net, SERVER_OFFSET + i), 'control-plane'));
  });
  for (let i = 0; i < spec.workers; i++) {
    const m = machine(spec.name, `node-${i}`, nthAddress(net, WORKER_OFFSET + i), 'worker');
    m.podSubnet = `10.200.${i}.0/24`;
    machines.push(m);
  }
  return { spec, bridge: bridgeName(spec.name), bridgeAddress: `${nthAddress(net, 1)}/${net.prefix}`, prefix: net.prefix, machines };
}

function machine(lab: string, hostname: string, ip: string, role: LabMachine['role']): LabMachine {
  return { hostname, fqdn: `${hostname}.${LAB_DOMAIN}`, ip, role, unit: unitName(lab, hostname) };
}

/** Finds a machine of a lab by hostname; unknown names are input errors listing the known ones. */
export function findMachine(plan: LabPlan, hostname: string): LabMachine {
  const m = plan.machines.find((x) => x.hostname === hostname);
  if (!m) {
    const near = didYouMean(closest(hostname, plan.machines.map((x) => x.hostname)));
    throw new InputError(`lab "${plan.spec.name}" has no machine named "${hostname}"`,
      `${near ? `${near} ` : ''}its machines: ${plan.machines.map((x) => x.hostname).join(', ')}`);
  }
  return m;
}
