// `multipass up`: plan the VMs, record them, launch the missing ones (one at a time: Multipass
// crashed on many simultaneous launches, canonical/multipass#3336) with hardway's user-data, start
// stopped ones, wait for every address, write DIR's files, and log in to each with the pinned host
// key. A rerun keeps the VMs it launched and launches only what is missing.
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { FailureError, InputError } from '../errors.ts';
import { runSteps, type ProgressOptions } from '../lab/progress.ts';
import { addressChanges, pickAddress, type AddressChange } from './addresses.ts';
import type { MultipassClient } from './client.ts';
import { isDeleted } from './json.ts';
import { ensureProjectKey, generateHostKey } from './keys.ts';
import { checkDirIsOurs, FILES, machinesTxtAddresses, writeFiles, type AddressedVm } from './outputs.ts';
import { checkSpec, planVms } from './plan.ts';
import type { Clock, Probe } from './probe.ts';
import { readRecord, writeRecord } from './record.ts';
import type { Instance, MultipassRecord, MultipassSpec, PlannedVm, VmRecord } from './types.ts';
import { userData, type KeyPair } from './user-data.ts';

/** What `multipass` commands work with, passed in so tests replace Multipass, SSH and time. */
export interface MultipassDeps {
  client: MultipassClient;
  /** Where records are kept (names.ts defaultStateDir). */
  stateDir: string;
  probe: Probe;
  clock: Clock;
  progress: ProgressOptions;
  hostKey?: (comment: string) => Promise<KeyPair>;
}

/** What `up` did. */
export interface UpResult {
  vms: AddressedVm[];
  launched: string[];
  started: string[];
  kept: string[];
  /** Addresses that differ from the machines.txt found in DIR (now rewritten). */
  changed: AddressChange[];
}

/** Brings the VMs of a spec up and writes DIR's files. */
export async function multipassUp(spec: MultipassSpec, deps: MultipassDeps): Promise<UpResult> {
  checkSpec(spec);
  checkDirIsOurs(spec.dir, spec.prefix);
  const old = readRecord(deps.stateDir, spec.prefix);
  checkRecordFits(old, spec);
  const planned = planVms(spec.prefix, spec.servers, spec.workers);
  const instances = new Map((await deps.client.list()).map((i) => [i.name, i]));
  const { launch, start, kept } = classify(planned, old, instances);
  const authorizedKey = await ensureProjectKey(spec.dir, spec.prefix);

  // The record names every VM before any launch, so `down` can remove a half-launched set.
  const keys = new Map<string, KeyPair>();
  const record: MultipassRecord = { version: 1, prefix: spec.prefix, dir: spec.dir, servers: spec.servers, workers: spec.workers, vms: [] };
  for (const p of planned) {
    const had = old?.vms.find((v) => v.vm === p.vm);
    if (had && !launch.includes(p.vm)) {
      record.vms.push({ ...had, ...p });
      continue;
    }
    const key = await (deps.hostKey ?? generateHostKey)(`root@${p.hostname}`);
    keys.set(p.vm, key);
    record.vms.push({ ...p, id: randomUUID(), hostKey: key.publicKey, launchedAt: new Date(deps.clock.now()).toISOString() });
  }
  writeRecord(deps.stateDir, record);

  await runSteps(record.vms.filter((v) => launch.includes(v.vm)).map((v) => ({
    title: `Launch ${v.vm} (${spec.image}, ${spec.cpus} CPU, ${spec.memory} memory, ${spec.disk} disk)`,
    run: () => deps.client.launch({
      name: v.vm, image: spec.image, cpus: spec.cpus, memory: spec.memory, disk: spec.disk, timeoutS: spec.timeoutS,
      userData: userData(spec.prefix, v, authorizedKey, keys.get(v.vm)!),
    }),
  })), { ...deps.progress, concurrent: false });
  await deps.client.start(start);

  const addresses = await waitForAddresses(deps, record.vms.map((v) => v.vm), spec.timeoutS);
  const machinesFile = join(spec.dir, FILES.machines);
  const inFile = existsSync(machinesFile) ? machinesTxtAddresses(readFileSync(machinesFile, 'utf8')) : new Map<string, string>();
  const vms: AddressedVm[] = record.vms.map((v) => ({ ...plannedOf(v), hostKey: v.hostKey, ip: pickAddress(addresses.get(v.vm)!, inFile.get(v.hostname) ?? v.ip)! }));
  const changed = addressChanges(inFile, vms);
  record.vms = record.vms.map((v, i) => ({ ...v, ip: vms[i]!.ip }));
  writeRecord(deps.stateDir, record);
  writeFiles(spec.dir, spec.prefix, vms);
  await waitForLogins(deps, spec, record.vms, spec.timeoutS);
  return { vms, launched: launch, started: start, kept, changed };
}

function checkRecordFits(old: MultipassRecord | undefined, spec: MultipassSpec): void {
  if (!old) return;
  const down = `hardway multipass down --name ${spec.prefix}`;
  if (old.dir !== spec.dir) {
    throw new InputError(`Multipass "${spec.prefix}" has its files in ${old.dir}`, `pass --dir ${old.dir}, or run "${down}" first`);
  }
  if (old.servers !== spec.servers || old.workers !== spec.workers) {
    throw new InputError(`Multipass "${spec.prefix}" has ${old.servers} server(s) and ${old.workers} worker(s)`,
      `pass --servers ${old.servers} --workers ${old.workers}, or run "${down}" first`);
  }
}

// What to do with each planned VM, from Multipass's list and hardway's record.
function classify(planned: PlannedVm[], old: MultipassRecord | undefined, instances: Map<string, Instance>) {
  const launch: string[] = [];
  const start: string[] = [];
  const kept: string[] = [];
  const foreign: string[] = [];
  const deleted: string[] = [];
  for (const p of planned) {
    const inst = instances.get(p.vm);
    if (!inst) launch.push(p.vm);
    else if (!old?.vms.some((v) => v.vm === p.vm)) foreign.push(p.vm);
    else if (isDeleted(inst.state)) deleted.push(p.vm);
    else if (/^(stopped|suspended)$/i.test(inst.state)) start.push(p.vm);
    else kept.push(p.vm);
  }
  if (foreign.length > 0) {
    throw new InputError(`Multipass already has ${foreign.join(', ')}, which hardway did not launch`,
      `choose another --name, or delete ${foreign.length > 1 ? 'them' : 'it'} yourself if you do not need ${foreign.length > 1 ? 'them' : 'it'}: multipass delete --purge ${foreign.join(' ')}`);
  }
  if (deleted.length > 0) {
    throw new FailureError(`${deleted.join(', ')} ${deleted.length > 1 ? 'are' : 'is'} deleted in Multipass but not purged`,
      `keep ${deleted.length > 1 ? 'them' : 'it'}: "multipass recover ${deleted.join(' ')}"; or have it launched afresh: "multipass delete --purge ${deleted.join(' ')}"; then run hardway multipass up again`);
  }
  return { launch, start, kept };
}

function plannedOf(v: VmRecord): PlannedVm {
  return { vm: v.vm, hostname: v.hostname, fqdn: v.fqdn, role: v.role, ...(v.podSubnet ? { podSubnet: v.podSubnet } : {}) };
}

/** Polls `multipass info` until every VM has an IPv4 address; FailureError naming those without one at the deadline. */
export async function waitForAddresses(deps: Pick<MultipassDeps, 'client' | 'clock'>, names: string[], timeoutS: number): Promise<Map<string, string[]>> {
  const deadline = deps.clock.now() + timeoutS * 1000;
  for (;;) {
    const info = await deps.client.info(names);
    const missing = names.filter((n) => (info.get(n)?.ipv4.length ?? 0) === 0);
    if (missing.length === 0) return new Map(names.map((n) => [n, info.get(n)!.ipv4]));
    if (deps.clock.now() >= deadline) {
      const states = missing.map((n) => `${n} (${info.get(n)?.state ?? 'not listed'})`).join(', ');
      throw new FailureError(`no IPv4 address after ${timeoutS} s: ${states}`,
        `Multipass reports no address for ${missing.length > 1 ? 'them' : 'it'}: see "multipass info ${missing.join(' ')}" and the host's Multipass network, then run hardway multipass up again (--timeout allows longer)`);
    }
    await deps.clock.sleep(2000);
  }
}

// Every VM must let root in with the project key while presenting the host key hardway made, and
// carry this launch's marker. A different host key fails at once: that is not the VM hardway made.
async function waitForLogins(deps: MultipassDeps, spec: MultipassSpec, vms: VmRecord[], timeoutS: number): Promise<void> {
  const deadline = deps.clock.now() + timeoutS * 1000;
  const one = async (v: VmRecord): Promise<void> => {
    for (;;) {
      const r = await deps.probe(spec.dir, v.hostname, v.ip!);
      if (r.status === 'ok') {
        if (r.marker.id === v.id) return;
        throw new FailureError(`${v.vm} (${v.ip}) carries another launch's marker (${r.marker.id ?? 'none'}), not the one hardway recorded (${v.id})`,
          `it is not the VM hardway launched: delete it ("multipass delete --purge ${v.vm}") and run hardway multipass up again`);
      }
      if (r.status === 'host-key') {
        throw new FailureError(`${v.vm} (${v.ip}) presented a host key that is not the one hardway generated for it`,
          `it did not take hardway's user-data (launched otherwise), or ${v.ip} now belongs to another machine; ssh said: ${r.detail}`);
      }
      if (deps.clock.now() >= deadline) {
        throw new FailureError(`${v.vm} (${v.ip}): no SSH login as root with ${join(spec.dir, FILES.key)} within ${timeoutS} s`,
          `last ssh error: ${r.detail}; try "ssh -F ${join(spec.dir, FILES.sshConfig)} ${v.hostname}" and "multipass info ${v.vm}"`);
      }
      await deps.clock.sleep(1000);
    }
  };
  const results = await Promise.allSettled(vms.map(one));
  const errors = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as unknown] : []));
  if (errors.length === 1) throw errors[0];
  if (errors.length > 1) {
    throw new FailureError(`${errors.length} VMs failed the SSH check:\n${errors.map((e) => `  ${(e as Error).message}`).join('\n')}`,
      errors.map((e) => (e as FailureError).hint).filter(Boolean).join('\n  hint: '));
  }
}
