// Recorded evidence for doctor's unit tests: test/fixtures/doctor/<name>.json, taken from a real
// 1-server 2-worker lab (healthy, then after each `hardway lab break` scenario). A scenario's file is
// the whole recording (as scripts/record-doctor-evidence.ts writes it), or one trimmed to the machine
// it broke and the API's answer; the rest then comes from healthy.json.
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { loadInventory } from '../../src/inventory.ts';
import type { ApiEvidence, DoctorContext, LabContext, MachineEvidence } from '../../src/doctor/types.ts';

/** The fixture directory: project/ holds the lab's machines.txt and cluster.yaml. */
export const DOCTOR_FIXTURES = resolve(import.meta.dirname, '../fixtures/doctor');

interface Recorded {
  base?: string;
  now: number;
  lab?: LabContext;
  testImages?: string[];
  pki?: Record<string, string>;
  rendered?: Record<string, Record<string, string>>;
  api: ApiEvidence;
  evidence: MachineEvidence[];
}

/** The recordings of a 1+2 lab running the cluster DNS add-on (scripts/record-doctor-evidence.ts): healthy, dns-loop, dns-down. */
export const DOCTOR_DNS_FIXTURES = resolve(import.meta.dirname, '../fixtures/doctor-dns');

const read = (dir: string, name: string): Recorded => JSON.parse(readFileSync(join(dir, `${name}.json`), 'utf8')) as Recorded;

/** The machines a recording holds evidence of: one, when it was trimmed to the machine its scenario broke. */
export function recordedMachines(name: string, dir = DOCTOR_FIXTURES): string[] {
  return read(dir, name).evidence.map((e) => e.machine);
}

/** A recorded run: the context doctor would have built, the evidence and the API's answer. */
export function recorded(name: string, dir = DOCTOR_FIXTURES): { ctx: DoctorContext; evidence: MachineEvidence[]; api: ApiEvidence } {
  const healthy = read(dir, 'healthy');
  const r = name === 'healthy' ? healthy : read(dir, name);
  const evidence = healthy.evidence.map((e) => r.evidence.find((x) => x.machine === e.machine) ?? e);
  const inventory = loadInventory(join(dir, 'project/machines.txt'));
  const ctx: DoctorContext = {
    inventory,
    rendered: healthy.rendered!,
    pki: healthy.pki!,
    caPem: healthy.pki!['pki/ca.crt'],
    lab: r.lab,
    projectArgs: '',
    testImages: healthy.testImages!,
    now: r.now,
  };
  // Recorded before the API answer held pods that do not run.
  return { ctx, evidence: structuredClone(evidence), api: structuredClone({ ...r.api, podProblems: r.api.podProblems ?? [] }) };
}
