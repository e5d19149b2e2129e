// Which worker `hardway remove-node NAME` takes out of the cluster, before or after its line leaves
// machines.txt. Drains it and deletes its Node through the API, resets the machine (everything
// hardway installed there), then pins the names and sets the routes of every other machine without
// it. Where the machine is when its line is gone: its own certificate in pki/machines/NAME/, which
// hardway issued for exactly that machine's names and address (and keeps as the record).
import { join } from 'node:path';
import { readOptional } from './certs/pki-files.ts';
import { parseSans, readableCertificate } from './certs/inspect.ts';
import { InputError, quote } from './errors.ts';
import { displayPath, HOSTNAME, type Inventory, type Machine } from './inventory.ts';
import { PKI } from './layout.ts';

/** The machine to remove and the inventory of the machines that stay. */
export interface Removal {
  machine: Machine;
  others: Inventory;
  /** Where the machine was found: machines.txt, or its certificate. */
  from: string;
}

/** Finds worker `name` in machines.txt or, once its line is gone, in its certificate in pki/. */
export function removalOf(inv: Inventory, name: string): Removal {
  const listed = inv.machines.find((m) => m.hostname === name);
  if (listed?.role === 'control-plane') {
    throw new InputError(`${name} is a control-plane machine; remove-node removes workers`, 'etcd members and API servers are not removed by hardway yet');
  }
  const machine = listed ?? recordedWorker(inv, name);
  const machines = inv.machines.filter((m) => m.hostname !== name);
  return {
    machine,
    others: { ...inv, machines, workers: machines.filter((m) => m.role === 'worker') },
    from: listed ? `${inv.machinesFile}:${listed.line}` : PKI.machine(name, 'kubelet').crt,
  };
}

/** A worker no longer in machines.txt, from the kubelet certificate hardway issued for it (its names and IP). */
function recordedWorker(inv: Inventory, name: string): Machine {
  const known = `known workers: ${inv.workers.map((m) => m.hostname).join(', ') || 'none'}`;
  // Only a hostname can have a record: anything else (a path, "..") is never looked up as one.
  if (!HOSTNAME.test(name)) throw new InputError(`${quote(name)} is not a hostname, and no worker of machines.txt`, `${known}; a hostname is a lower-case label of letters, digits and "-"`);
  const file = PKI.machine(name, 'kubelet').crt;
  const pem = readOptional(join(inv.dir, file));
  const hint = `${known}; a removed one is found by its certificate ${file}`;
  if (!pem) throw new InputError(`no worker named "${name}" in machines.txt, and no record of one: ${file} does not exist`, hint);
  const cert = readableCertificate(pem);
  if (!cert) throw new InputError(`${file} is not a readable certificate, so it says nothing of where ${name} is`, hint);
  const sans = parseSans(cert.subjectAltName);
  const ip = sans.find((s) => s.startsWith('IP:') && s !== 'IP:127.0.0.1')?.slice(3);
  const fqdn = sans.find((s) => s.startsWith('DNS:') && s !== `DNS:${name}`)?.slice(4);
  if (!ip || !fqdn) throw new InputError(`${file} does not name the machine's address and FQDN (SANs: ${sans.join(', ')})`, hint);
  // Its old address given to another machine since: reset there would wipe that one.
  const holder = inv.machines.find((m) => m.ip === ip);
  if (holder) {
    throw new InputError(
      `${name} is gone from machines.txt, and its address ${ip} (from ${file}) now belongs to ${holder.hostname} (${displayPath(inv.machinesFile)}:${holder.line}, ${holder.role}); nothing was changed`,
      `remove-node would reset the machine at ${ip}, which is ${holder.hostname} now. If ${name} is gone for good: "hardway up" drops its names and routes from the others, "kubectl delete node ${name}" its Node; move ${file} away to drop the record`,
    );
  }
  // Only the paths of what reset removes are rendered from it, and no value of the pod subnet changes a path.
  return { ip, fqdn, hostname: name, role: 'worker', podSubnet: inv.settings.clusterCidr, line: 0 };
}

/** remove-node's scope (a RunScope of src/command-table.ts): the inventory without NAME, which leaves the cluster in this run. */
export const removalScope = (inv: Inventory, names: string[]): { inventory: Inventory; note: string } => {
  const [name, ...rest] = names;
  if (!name || rest.length > 0) throw new InputError('remove-node takes exactly one worker', 'e.g. hardway remove-node --node node-2 --yes');
  const { machine, others, from } = removalOf(inv, name);
  return { inventory: { ...others, leaving: [machine] }, note: `remove-node: ${name} (${machine.ip}, from ${from})` };
};
