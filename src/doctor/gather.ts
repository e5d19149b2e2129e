// Gathering: one SSH connection per machine, all machines at once; doctor's own requests in one facts
// batch, which the steps' plans join (a plan whose next read depends on its first asks again). Only
// reads; a machine that does not answer becomes evidence too, never an exception.
import type { Machine } from '../inventory.ts';
import { coalescedFacts } from '../engine/coalesced-facts.ts';
import { createFacts, type Facts, type FileFact, type ProbeResult } from '../engine/facts.ts';
import { AuthError, HostKeyError, type Connect } from '../transport/index.ts';
import type { Transport } from '../transport/types.ts';
import type { MachineRequests } from './probes.ts';
import type { DriftEvidence, MachineEvidence } from './types.ts';

/**
 * Asks one machine every batch of `requests` on one connection, all at once (a batch whose request
 * is still being decided is sent when it is ready, beside the others), and, given `plan`, plans the
 * steps over the same facts: batches asked within a few milliseconds of each other go out as one
 * remote command, so the plans' first reads ride on doctor's own batch. Never throws.
 */
export async function gatherMachine(m: Machine, requests: Array<MachineRequests | Promise<MachineRequests>>, connect: Connect,
  plan?: (facts: Facts) => Promise<DriftEvidence[]>): Promise<MachineEvidence> {
  const evidence: MachineEvidence = { machine: m.hostname, probes: {}, files: {} };
  let t: Transport;
  try {
    t = await connect({ name: m.hostname, machine: m });
  } catch (e) {
    // No key offered at all is not the machine refusing one.
    const kind = e instanceof HostKeyError ? 'host-key' : e instanceof AuthError ? (e.tried.length ? 'auth' : 'no-key') : 'connect';
    evidence.unreachable = { kind, message: (e as Error).message, hint: (e as { hint?: string }).hint };
    return evidence;
  }
  try {
    const facts = coalescedFacts(createFacts(t));
    const planned = plan?.(facts).then((drift) => {
      evidence.drift = drift;
    });
    await Promise.all([planned, ...requests.map(async (request) => {
      const req = await request;
      const names = Object.keys(req.probes);
      const answers = await facts.batch([
        ...req.reads.map((path) => ({ op: 'R' as const, path })),
        ...names.map((k) => req.probes[k]!),
      ]);
      req.reads.forEach((path, i) => {
        const f = answers[i] as FileFact;
        evidence.files[path] = f.exists && f.content ? f.content.toString('utf8') : null;
      });
      names.forEach((k, i) => {
        evidence.probes[k] = answers[req.reads.length + i] as ProbeResult;
      });
    })]);
  } catch (e) {
    evidence.unreachable = { kind: 'facts', message: (e as Error).message };
  } finally {
    await t.close().catch(() => undefined);
  }
  return evidence;
}
