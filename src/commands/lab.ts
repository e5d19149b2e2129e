// `hardway lab ...`: local lab machines (systemd-nspawn) with sshd and cloud-init. The work is in
// src/lab/; these are the options, the messages and the exit codes.
import { spawn } from 'node:child_process';
import { join, resolve } from 'node:path';
import { say, type CliCommand, type CliContext, type OptionSpec } from '../cli/command.ts';
import { InputError } from '../errors.ts';
import { labRebootMachine, labStartMachine, labStopMachine } from '../lab/control.ts';
import { labDown, labDownAll } from '../lab/down.ts';
import { DEFAULT_LAB, defaultDir, defaultLabPaths } from '../lab/names.ts';
import { LAB_FILES } from '../lab/outputs.ts';
import { findMachine } from '../lab/plan.ts';
import { LAB_REGISTRY_MIRROR, LAB_REGISTRY_NAME, REGISTRY_HOSTNAME, REGISTRY_OFFSET } from '../lab/registry.ts';
import { checkLabHost } from '../lab/preconditions.ts';
import type { ProgressOptions } from '../lab/progress.ts';
import { listLabs, readState, resolveLab } from '../lab/state.ts';
import { formatStatus, labStatus } from '../lab/status.ts';
import { labUp } from '../lab/up.ts';
import type { LabState } from '../lab/types.ts';

const NAME: Record<string, OptionSpec> = {
  name: { type: 'string', arg: 'NAME', description: `the lab (default: the only lab on this host, else "${DEFAULT_LAB}")` },
};

const progressOf = (ctx: CliContext): ProgressOptions => ({ stream: ctx.stdout, env: ctx.env });
const pathsOf = (ctx: CliContext) => defaultLabPaths(ctx.env);

function wholeNumber(ctx: CliContext, option: string): number {
  const text = ctx.values[option] as string;
  if (!/^\d+$/.test(text)) throw new InputError(`--${option} must be a whole number, got "${text}"`);
  return Number(text);
}

function oneMachine(ctx: CliContext, cmd: string): string {
  const [machine, ...rest] = ctx.positionals;
  if (!machine || rest.length > 0) throw new InputError(`${cmd} takes exactly one MACHINE`, `e.g. hardway ${cmd} node-0`);
  return machine;
}

function describeLab(state: LabState): string {
  const { spec } = state.plan;
  const lines = state.plan.machines.map((m) => `  ${m.hostname.padEnd(10)} ${m.ip}${m.role === 'registry' ? `   (lab registry, not in machines.txt: ${LAB_REGISTRY_NAME}/... pulls from it)` : ''}`);
  return [
    `lab "${spec.name}" on ${spec.subnet} (bridge ${state.plan.bridge}), files in ${spec.dir}:`,
    ...lines,
    `Next: cd ${spec.dir} && hardway inventory   |   ssh -F ${join(spec.dir, LAB_FILES.sshConfig)} ${state.plan.machines.at(-1)!.hostname}`,
  ].join('\n');
}

/** `hardway lab up`. */
export const labUpCommand: CliCommand = {
  name: 'lab up',
  summary: 'Start local lab machines (systemd-nspawn) with sshd and cloud-init',
  details: [
    'Builds a Debian 12 root once (debootstrap, about 4 minutes; cached under ~/.cache/hardway), then boots',
    'each machine on an overlay of it: servers at .10, .11..., workers node-0, node-1... at .20, .21...',
    '(one server is named "server", several are server-0, server-1...). Writes machines.txt, cluster.yaml,',
    'id_ed25519, known_hosts and ssh_config into DIR, so "cd DIR && hardway ..." needs no flags.',
    'Needs root. Nothing leaves the lab: no NAT, no route out, cloud-init reads only its local seed.',
    `With --registry, one more machine, "${REGISTRY_HOSTNAME}" at .${REGISTRY_OFFSET}: Debian's docker-registry as a`,
    'systemd service (its .deb fetched here with apt-get download, installed in the machine), not in',
    'machines.txt. The images of DIR/images/ (built first if there are none) are pushed into it with',
    `skopeo, and cluster.yaml maps ${LAB_REGISTRY_NAME} to it (registries: mirror ${LAB_REGISTRY_MIRROR}),`,
    `so ${LAB_REGISTRY_NAME}/hardway/web:1 pulls on every worker. Rerun it to push new images.`,
  ].join('\n'),
  options: {
    name: { type: 'string', arg: 'NAME', default: DEFAULT_LAB, description: 'lab name (1-12 of a-z 0-9 -), the bridge is hw-NAME' },
    servers: { type: 'string', arg: 'N', default: '1', description: 'control-plane machines' },
    workers: { type: 'string', arg: 'N', default: '2', description: 'worker machines' },
    subnet: { type: 'string', arg: 'CIDR', default: '10.240.0.0/24', description: 'the lab network; the host bridge takes its first address' },
    dir: { type: 'string', arg: 'DIR', description: 'where to write the lab files (default: ./lab, or ./lab-NAME for other names)' },
    registry: { type: 'boolean', description: `a registry machine too (docker-registry at .${REGISTRY_OFFSET}) with DIR/images/ in it` },
  },
  async run(ctx) {
    const name = ctx.values.name as string;
    const dir = resolve(ctx.cwd, (ctx.values.dir as string | undefined) ?? defaultDir(name));
    const spec = {
      name, servers: wholeNumber(ctx, 'servers'), workers: wholeNumber(ctx, 'workers'), subnet: ctx.values.subnet as string, dir,
      ...(ctx.values.registry ? { registry: true } : {}),
    };
    const result = await labUp(spec, pathsOf(ctx), progressOf(ctx));
    for (const line of result.hostChanges) say(ctx.stdout, line);
    for (const line of result.registry) say(ctx.stdout, line);
    if (result.alreadyRunning) say(ctx.stdout, 'already running, nothing to do:');
    say(ctx.stdout, describeLab(result.state));
    return 0;
  },
};

/** `hardway lab status`. */
export const labStatusCommand: CliCommand = {
  name: 'lab status',
  summary: 'Show each lab machine: address, running, SSH reachable',
  options: { ...NAME, json: { type: 'boolean', description: 'print JSON' } },
  details: 'Without --name: the only lab; with several labs on this host, every lab (--json then prints an array).',
  async run(ctx) {
    const paths = pathsOf(ctx);
    const name = ctx.values.name as string | undefined;
    const labs = listLabs(paths).filter((l) => readState(paths, l) !== undefined);
    const every = name === undefined && labs.length > 1;
    const states = every ? labs.map((l) => readState(paths, l)!) : [resolveLab(paths, name)];
    const statuses = await Promise.all(states.map((s) => labStatus(s, paths)));
    if (ctx.values.json) say(ctx.stdout, JSON.stringify(every ? statuses : statuses[0], null, 2));
    else say(ctx.stdout, statuses.map(formatStatus).join('\n\n'));
    return 0;
  },
};

/** `hardway lab ssh`. */
export const labSshCommand: CliCommand = {
  name: 'lab ssh',
  summary: 'Open a shell or run a command on a lab machine',
  args: 'MACHINE [-- COMMAND...]',
  details: 'Runs the system ssh with the lab\'s ssh_config (strict host-key checking). Put -- before a command with options.',
  options: NAME,
  async run(ctx) {
    const [machine, ...command] = ctx.positionals;
    if (!machine) throw new InputError('lab ssh needs a MACHINE', 'e.g. hardway lab ssh node-0 -- hostname');
    const state = resolveLab(pathsOf(ctx), ctx.values.name as string | undefined);
    findMachine(state.plan, machine);
    const args = ['-F', join(state.plan.spec.dir, LAB_FILES.sshConfig), machine, ...command];
    const inherit = ctx.stdout === process.stdout;
    return await new Promise<number>((done, fail) => {
      const child = spawn('ssh', args, { stdio: inherit ? 'inherit' : ['ignore', 'pipe', 'pipe'] });
      child.stdout?.pipe(ctx.stdout, { end: false });
      child.stderr?.pipe(ctx.stderr, { end: false });
      child.on('error', fail);
      child.on('close', (code) => done(code ?? 1));
    });
  },
};

/** A lab command that acts on one machine of a lab: resolves the lab and the machine, then `act` says what happened. */
function machineCommand(name: string, summary: string, act: (state: LabState, ctx: CliContext, machine: string) => Promise<string>): CliCommand {
  return {
    name,
    summary,
    args: 'MACHINE',
    options: NAME,
    async run(ctx) {
      const machine = oneMachine(ctx, name);
      const state = resolveLab(pathsOf(ctx), ctx.values.name as string | undefined);
      say(ctx.stdout, await act(state, ctx, machine));
      return 0;
    },
  };
}

/** `hardway lab reboot`. */
export const labRebootCommand = machineCommand('lab reboot', 'Restart a lab machine for real (cloud-init runs again)', async (state, ctx, machine) => {
  await labRebootMachine(state, pathsOf(ctx), machine, progressOf(ctx));
  return `${machine} rebooted and answers over SSH`;
});

/** `hardway lab stop`. */
export const labStopCommand = machineCommand('lab stop', 'Stop one lab machine', async (state, ctx, machine) =>
  (await labStopMachine(state, pathsOf(ctx), machine)) ? `${machine} stopped` : `${machine} was not running, nothing to do`);

/** `hardway lab start`. */
export const labStartCommand = machineCommand('lab start', 'Start a stopped lab machine', async (state, ctx, machine) =>
  (await labStartMachine(state, pathsOf(ctx), machine, progressOf(ctx)))
    ? `${machine} started and answers over SSH`
    : `${machine} was already running, nothing to do`);

/** `hardway lab down`. */
export const labDownCommand: CliCommand = {
  name: 'lab down',
  summary: 'Stop every lab machine and remove overlays, bridge and mounts',
  details: 'Leaves the cached root filesystem and the files in the lab directory. Safe to run again, and after a failed "lab up".',
  options: { ...NAME, all: { type: 'boolean', description: 'take down every lab on this host' } },
  async run(ctx) {
    await checkLabHost();
    const paths = pathsOf(ctx);
    if (ctx.values.all) {
      const lines = await labDownAll(paths);
      say(ctx.stdout, lines.length ? lines.join('\n') : 'no lab on this host, nothing to do');
      return 0;
    }
    const labs = listLabs(paths);
    if (ctx.values.name === undefined && labs.length > 1) {
      throw new InputError(`several labs on this host: ${labs.join(', ')}`, 'pass --name NAME, or --all to take every lab down');
    }
    const name = (ctx.values.name as string | undefined) ?? (labs.length === 1 ? labs[0]! : DEFAULT_LAB);
    if (!labs.includes(name)) {
      say(ctx.stdout, `no lab named "${name}" on this host, nothing to do`);
      return 0;
    }
    say(ctx.stdout, await labDown(paths, name));
    return 0;
  },
};
