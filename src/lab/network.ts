// The lab's own bridge on the host: first address of the lab subnet, nothing else. No NAT, no
// forwarding changes, no routes: traffic stays between the host and the lab machines.
import { InputError } from '../errors.ts';
import { overlaps, parseCidr, type Network } from '../net/ipv4.ts';
import { local, tryLocal } from '../transport/local.ts';

/** True if a network interface with this name exists. */
export async function linkExists(name: string): Promise<boolean> {
  return (await tryLocal`ip link show dev ${name}`).code === 0;
}

/** Creates the bridge with the host address and brings it up (idempotent). */
export async function ensureBridge(name: string, address: string): Promise<void> {
  if (!(await linkExists(name))) await local`ip link add name ${name} type bridge`;
  const addrs = await local`ip -o -4 addr show dev ${name}`;
  if (!addrs.includes(` ${address} `)) await local`ip addr add ${address} dev ${name}`;
  await local`ip link set dev ${name} up`;
}

/** Deletes the bridge if it exists. */
export async function removeBridge(name: string): Promise<void> {
  if (await linkExists(name)) await local`ip link del dev ${name}`;
}

/** One IPv4 route of the host: destination network and device. */
export interface HostRoute {
  dst: string;
  dev: string;
}

/** The host's IPv4 routes (ip -j route, every table). */
export async function hostRoutes(): Promise<HostRoute[]> {
  const out = await local`ip -j -4 route show table all`;
  return (JSON.parse(out) as Array<{ dst: string; dev?: string; type?: string }>)
    .filter((r) => r.dev !== undefined && (r.type === undefined || r.type === 'unicast'))
    .map((r) => ({ dst: r.dst, dev: r.dev! }));
}

/** Refuses a lab subnet that overlaps a network the host already reaches through another interface. Pure. */
export function checkSubnetFree(subnet: Network, ownBridge: string, routes: HostRoute[]): void {
  for (const r of routes) {
    if (r.dev === ownBridge || r.dst === 'default') continue;
    const parsed = parseCidr(r.dst.includes('/') ? r.dst : `${r.dst}/32`);
    if (parsed.ok && overlaps(parsed.net, subnet)) {
      throw new InputError(`--subnet ${subnet.text} overlaps ${r.dst}, which this host already reaches through ${r.dev}`,
        r.dev.startsWith('hw-') ? `another lab uses it (bridge ${r.dev}); pick another subnet, e.g. --subnet 10.240.50.0/24`
          : 'pick a subnet the host does not use, e.g. --subnet 10.240.50.0/24');
    }
  }
}
