// What doctor asks each machine, derived from the checks' declarations: one facts batch (one SSH
// round trip) of the text files they read and the probes they ask, and, once the images to
// test-pull are known, the probes of the checks that wait for them. Nothing here writes: no file,
// no image, no cache entry (the facts script runs without its SHA-cache writes).
import type { Inventory, Machine } from '../inventory.ts';
import type { ProbeRequest } from '../probes/probe.ts';
import type { AskOf } from './checks/check.ts';
import { CHECK_LIST } from './checks/index.ts';
import type { MachineRequests } from './probes.ts';
import type { DnsPod } from './types.ts';

/** Every check's probes and reads for `q`, by key; a key two checks share must ask the same probe with the same command. */
export function requestsOf(q: AskOf, later: boolean): MachineRequests {
  const probes: Record<string, ProbeRequest> = {};
  const reads = new Set<string>();
  for (const c of CHECK_LIST.filter((x) => (x.later ?? false) === later)) {
    for (const [key, req] of Object.entries(c.asks?.(q) ?? {})) {
      if (!req) continue;
      const had = probes[key];
      if (had && (had.probe !== req.probe || had.cmd.text !== req.cmd.text)) throw new Error(`doctor checks ask "${key}" differently: ${had.probe} and ${req.probe}`);
      probes[key] ??= req;
    }
    for (const path of c.reads?.(q) ?? []) reads.add(path);
  }
  return { reads: [...reads], probes };
}

/** Everything doctor asks `m` at once, given the rendered files it compares (test pulls aside: pullRequests). */
export function requestsFor(inv: Inventory, m: Machine, rendered: string[]): MachineRequests {
  return requestsOf({ inventory: inv, machine: m, rendered, testImages: [], dnsPods: [] }, false);
}

/** What the checks that wait for the API's answer ask a machine (the test images, the DNS pods), beside the main batch once it is known. */
export function pullRequests(inv: Inventory, m: Machine, testImages: string[], dnsPods: readonly DnsPod[] = []): MachineRequests {
  return requestsOf({ inventory: inv, machine: m, rendered: [], testImages, dnsPods }, true);
}
