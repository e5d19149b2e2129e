// `hardway remove-node NAME`: takes a worker out of the cluster, before or after its line leaves
// machines.txt. Drains it and deletes its Node through the API, resets the machine (everything
// hardway installed there), then pins the names and sets the routes of every other machine without
// it. Where the machine is when its line is gone: its own certificate in pki/machines/NAME/, which
// hardway issued for exactly that machine's names and address (and keeps as the record).
import { join } from 'node:path';
import { machinesFile, yesOption, type CommandModule, type CliContext, type OptionSpec } from '../cli/command.ts';
import { checkPkiDir, readOptional } from '../certs/pki-files.ts';
import { parseSans, readableCertificate } from '../certs/inspect.ts';
import { withRunLock } from '../engine/lock.ts';
import { runSession } from '../engine/session.ts';
import type { StepOptions } from '../engine/types.ts';
import { InputError, quote } from '../errors.ts';
import { displayPath, HOSTNAME, loadInventory, type Inventory, type Machine } from '../inventory.ts';
import { PKI } from '../layout.ts';
import { STEP_OPTIONS } from '../steps/options.ts';
import { REMOTE_OPTIONS, RUN_JSON_FIELDS, sshConnectors } from './remote.ts';
import { checkIdentityFiles } from '../transport/auth.ts';

// The options of a remote run but --node and --only: the machines and the steps are remove-node's own.
const { node: _node, only: _only, ...RUN_OPTIONS } = REMOTE_OPTIONS;

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

/** `hardway remove-node NAME`. */
export const removeNodeCommand: CommandModule = {
  name: 'remove-node',
  args: '[NAME]',
  details: [
    'NAME is a worker of machines.txt, or one whose line is already gone: then its address and names',
    'come from the certificate hardway issued for it, pki/machines/NAME/kubelet.crt (kept as the record).',
    'Steps: drain-node (on the first control-plane machine: cordon, drain, delete the Node), reset on NAME,',
    'then pin-hosts and routes on every other machine, as if NAME were not in machines.txt.',
    'The worker is named with --node NAME or as the first argument. A machine that is gone for good cannot be reset: --keep-going still updates the others.',
    'Then remove its line from machines.txt (if it is still there); "hardway up" converges.',
  ].join('\n'),
  options: {
    ...RUN_OPTIONS,
    node: { type: 'string', arg: 'NAME', description: 'the worker to take out (it may also be given as the first argument)' },
    yes: yesOption('the machine loses everything hardway installed'),
    local: STEP_OPTIONS.local,
  } satisfies Record<string, OptionSpec>,
  examples: [
    ['hardway remove-node --node node-2 --dry-run', 'every change it would make, changing nothing'],
    ['hardway remove-node --node node-2 --yes', 'drain node-2, delete its Node, reset it, and drop its names and routes everywhere'],
  ],
  jsonFields: RUN_JSON_FIELDS,
  async run(ctx: CliContext) {
    const names = [...(typeof ctx.values.node === 'string' ? [ctx.values.node] : []), ...ctx.positionals];
    const [name] = names;
    if (!name || names.length > 1) throw new InputError('remove-node takes exactly one worker', 'e.g. hardway remove-node --node node-2 --yes');
    const v = ctx.values;
    if (v.yes !== true && v['dry-run'] !== true) {
      throw new InputError(`"hardway remove-node ${name}" drains ${name} and removes everything hardway installed on it: rerun with --yes to do it`, `"hardway remove-node ${name} --dry-run" shows every change`);
    }
    const inventory = loadInventory(machinesFile(ctx));
    checkPkiDir(inventory.dir);
    checkIdentityFiles(v.identity as string[] | undefined, ctx.cwd);
    const { machine, others, from } = removalOf(inventory, name);
    const [{ drainNodeStep }, { resetStep }, { pinHostsStep }, { routesStep }] = await Promise.all([
      import('../steps/drain-node.ts'), import('../steps/reset.ts'), import('../steps/pin-hosts.ts'), import('../steps/routes.ts'),
    ]);
    ctx.stderr.write(`remove-node: ${name} (${machine.ip}, from ${from})\n`);
    const steps = [drainNodeStep(name), { ...resetStep, jumpbox: undefined, targets: () => [machine] }, pinHostsStep, routesStep];
    const options: StepOptions = { dryRun: v['dry-run'] === true, verbose: v.verbose === true, keepGoing: v['keep-going'] === true, concurrency: Number(v.concurrency), values: v };
    return withRunLock(inventory.dir, 'remove-node', async () => {
      const run = { command: 'remove-node', steps, inventory: others, selected: [...others.machines, machine], options, lockHeld: true };
      const io = { json: v.json === true, stdout: ctx.stdout, stderr: ctx.stderr, env: ctx.env, connectors: sshConnectors(ctx, inventory) };
      return (await runSession({ ...run, ...io })).code;
    });
  },
};
