// `hardway lab break`: picks the lab, the scenario and the machine, checks that the scenario can run
// there, and gives it the machine over the project's own SSH transport (strict host keys, as always).
import { join } from 'node:path';
import { CommandError, InputError } from '../errors.ts';
import { labLine, labMachineLine } from '../doctor/fixes.ts';
import { loadInventory, type Machine } from '../inventory.ts';
import { hostConnector } from '../transport/index.ts';
import { localKubectl } from '../probes/api.ts';
import { createFacts } from '../engine/facts.ts';
import type { Transport } from '../transport/types.ts';
import { runningPid } from '../lab/boot.ts';
import { labRebootMachine, labStopMachine } from '../lab/control.ts';
import { machineDir, type LabPaths } from '../lab/names.ts';
import { LAB_FILES } from '../lab/outputs.ts';
import { findMachine } from '../lab/plan.ts';
import type { ProgressOptions } from '../lab/progress.ts';
import { LAB_REGISTRY_NAME } from '../lab/registry.ts';
import { resolveLab } from '../lab/state.ts';
import { checkLabHost } from '../lab/preconditions.ts';
import { labOfDir } from '../lab/by-dir.ts';
import { findScenario, SCENARIOS, type BreakEnv, type Scenario } from './scenarios.ts';

/** What the user asked for. */
export interface BreakRequest {
  lab?: string;
  /** Where the command runs: the lab whose directory this is, when --name is not given. */
  cwd: string;
  scenario: string;
  node?: string;
  /** Say which machine it would break and how, breaking nothing. */
  dryRun?: boolean;
}

/** Breaks one machine of a lab; returns the lines to print (what was done, what a learner will see). */
export async function labBreak(req: BreakRequest, paths: LabPaths, progress: ProgressOptions): Promise<string[]> {
  const scenario = findScenario(req.scenario);
  if (!scenario) throw new InputError(`unknown scenario "${req.scenario.slice(0, 40)}"`, `scenarios: ${SCENARIOS.map((s) => s.name).join(', ')} (hardway lab break --list)`);
  await checkLabHost();
  const state = resolveLab(paths, req.lab ?? labOfDir(paths, req.cwd)?.plan.spec.name);
  const dir = state.plan.spec.dir;
  const inventory = loadInventory(join(dir, LAB_FILES.machines));
  const machine = chooseMachine(scenario, inventory.machines, req.node);
  if (scenario.registry && !(state.plan.spec.registry && inventory.settings.registries?.[LAB_REGISTRY_NAME])) {
    throw new InputError(`${scenario.name} needs the lab's registry, and lab "${state.plan.spec.name}" has none`, labLine('up', state.plan.spec.name, '--registry'));
  }
  const labMachine = findMachine(state.plan, machine.hostname);
  if (runningPid(machineDir(paths, state.plan.spec.name, machine.hostname), labMachine) === undefined) {
    throw new InputError(`${machine.hostname} is not running: ${scenario.name} breaks a running machine`, labMachineLine('start', machine.hostname, state.plan.spec.name));
  }
  // Everything above only read: which machine it would break is known, and nothing was changed yet.
  if (req.dryRun) return [`would break ${machine.hostname} of lab "${state.plan.spec.name}" (${scenario.name}): ${scenario.breaks}; nothing was changed`, `What you would see: ${scenario.sees}.`];
  let transport: Transport | undefined;
  let apiTransport: Transport | undefined;
  const connect = hostConnector(inventory, { dir });
  const connected = async () => (transport ??= await connect({ name: machine.hostname, machine }));
  const cp = inventory.controlPlanes[0]!;
  const apiTransportOf = async () => (apiTransport ??= await connect({ name: cp.hostname, machine: cp }));
  const env: BreakEnv = {
    inventory,
    machine,
    async exec(cmd) {
      const r = await (await connected()).exec(cmd);
      if (r.code !== 0) throw new CommandError(machine.hostname, cmd.text, r.code, r.stderr, r.stdout);
      return r.stdout;
    },
    async kubectl(args) {
      const cmd = localKubectl(args, 30);
      const r = await (await apiTransportOf()).exec(cmd);
      if (r.code !== 0) throw new CommandError(cp.hostname, cmd.text, r.code, r.stderr, r.stdout);
      return r.stdout;
    },
    async api(read) {
      const { answer } = await createFacts(await apiTransportOf()).ask({ answer: read });
      if (!answer.ok) throw new CommandError(cp.hostname, read.cmd.text, answer.code, answer.error, '');
      return answer.items;
    },
    upload: async (path, content, mode) => (await connected()).upload(path, { data: Buffer.from(content) }, { mode }),
    stop: async () => void (await labStopMachine(state, paths, machine.hostname)),
    async reboot() {
      // The reboot drops the connection: closed first, so nothing waits on a dead one.
      await transport?.close();
      transport = undefined;
      await labRebootMachine(state, paths, machine.hostname, progress);
    },
  };
  try {
    const done = await scenario.apply(env);
    return [
      `${scenario.name} on ${machine.hostname} (lab "${state.plan.spec.name}"):`,
      ...done.map((l) => `  ${l}`),
      `What you will see: ${scenario.sees}.`,
      `Find the cause: cd ${dir} && hardway doctor`,
    ];
  } finally {
    await transport?.close();
    await apiTransport?.close();
  }
}

/** The machines of a role the scenario can break. */
const breakable = (s: Scenario, machines: readonly Machine[]) => machines.filter((m) => s.roles.includes(m.role));

/** The machine a scenario breaks without --node: the last worker it can break, else the last machine of a role it can. */
export function defaultMachine(s: Scenario, machines: readonly Machine[]): Machine | undefined {
  const allowed = breakable(s, machines);
  return allowed.filter((m) => m.role === 'worker').at(-1) ?? allowed.at(-1);
}

/** The machine a scenario breaks: --node (a cluster machine of an allowed role), else defaultMachine. */
function chooseMachine(s: Scenario, machines: Machine[], node: string | undefined): Machine {
  if (node === undefined) {
    const last = defaultMachine(s, machines);
    if (!last) throw new InputError(`${s.name} needs a ${s.roles.join(' or ')} machine and the lab has none`);
    return last;
  }
  const m = machines.find((x) => x.hostname === node);
  if (!m) throw new InputError(`no machine "${node.slice(0, 40)}" in the lab's machines.txt`, `machines: ${machines.map((x) => x.hostname).join(', ')}`);
  if (!s.roles.includes(m.role)) throw new InputError(`${s.name} breaks a ${s.roles.join(' or ')} machine; ${m.hostname} is a ${m.role}`, `workers: ${breakable(s, machines).map((x) => x.hostname).join(', ')}`);
  return m;
}

/** `--list`: each scenario, what it breaks and what a learner sees. */
export function listScenarios(): string[] {
  return SCENARIOS.flatMap((s) => [
    `${s.name}${s.registry ? ' (needs lab up --registry)' : ''}`,
    `  breaks: ${s.breaks}`,
    `  you see: ${s.sees}`,
  ]);
}
