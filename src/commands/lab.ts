// `hardway lab ...`: local lab machines (systemd-nspawn) with sshd and cloud-init. The work is in
// src/lab/; these are the options, the messages and the exit codes.
import { spawn } from 'node:child_process';
import { join, resolve } from 'node:path';
import { commandLine, jsonOption, needsYes, say, sayJson, yesOption, type CommandModule, type CliContext, type OptionSpec } from '../cli/command.ts';
import { reportLines } from '../cli/json-output.ts';
import { InputError } from '../errors.ts';
import { labRebootMachine, labStartMachine, labStopMachine } from '../lab/control.ts';
import { describeLabDown, labDown, labDownAll } from '../lab/down.ts';
import { DEFAULT_LAB, defaultDir, defaultLabPaths } from '../lab/names.ts';
import { LAB_FILES } from '../lab/outputs.ts';
import { findMachine } from '../lab/plan.ts';
import { checkLoginUser } from '../lab/login.ts';
import { LAB_REGISTRY_MIRROR, LAB_REGISTRY_NAME, REGISTRY_HOSTNAME, REGISTRY_OFFSET } from '../lab/registry.ts';
import { checkLabHost, labAccessProblem } from '../lab/preconditions.ts';
import type { ProgressOptions } from '../lab/progress.ts';
import { listLabs, readState, resolveLab } from '../lab/state.ts';
import { formatStatus, labStatus } from '../lab/status.ts';
import { labUp, labUpDryRun } from '../lab/up.ts';
import type { LabState } from '../lab/types.ts';

const NAME: Record<string, OptionSpec> = {
  name: { type: 'string', arg: 'NAME', description: `the lab (default: the only lab on this host, else "${DEFAULT_LAB}")` },
};

const NODE: Record<string, OptionSpec> = {
  node: { type: 'string', arg: 'NAME', description: 'the machine (a hostname of the lab; it may also be given as the first argument)' },
};

// With --json, stdout carries the one object: the progress goes to stderr.
const progressOf = (ctx: CliContext): ProgressOptions => ({ stream: ctx.values.json === true ? ctx.stderr : ctx.stdout, env: ctx.env });
const pathsOf = (ctx: Pick<CliContext, 'env'>) => defaultLabPaths(ctx.env);

/** Refuses at once, naming the command to run instead, what this user cannot do: change the host, or read the labs' state. */
export function checkAccess(ctx: Pick<CliContext, 'env' | 'argv'>, name: string, changes: boolean): void {
  const problem = labAccessProblem(pathsOf(ctx), changes);
  if (problem) throw new InputError(`hardway ${name} needs root: ${problem}`, `run it as root: sudo ${commandLine(ctx, name)}`);
}

function wholeNumber(ctx: CliContext, option: string): number {
  const text = ctx.values[option] as string;
  if (!/^\d+$/.test(text)) throw new InputError(`--${option} must be a whole number, got "${text}"`);
  return Number(text);
}

/** The one machine a command acts on: --node NAME, or the first argument; `extra` arguments may follow only where allowed. */
function machineOf(ctx: CliContext, cmd: string, extra: boolean): { machine: string; rest: string[] } {
  const node = ctx.values.node as string | undefined;
  const [first, ...more] = ctx.positionals;
  const machine = node ?? first;
  const rest = node !== undefined ? ctx.positionals : more;
  if (!machine) throw new InputError(`${cmd} needs a machine`, `e.g. hardway ${cmd} --node node-0`);
  if (node !== undefined && first !== undefined && !extra) throw new InputError(`${cmd} takes one machine: --node ${node} or ${first}, not both`);
  if (!extra && rest.length > 0) throw new InputError(`${cmd} takes exactly one machine`, `e.g. hardway ${cmd} --node node-0`);
  return { machine, rest };
}

function describeLab(state: LabState): string {
  const { spec } = state.plan;
  const lines = state.plan.machines.map((m) => `  ${m.hostname.padEnd(10)} ${m.ip}${m.role === 'registry' ? `   (lab registry, not in machines.txt: ${LAB_REGISTRY_NAME}/... pulls from it)` : ''}`);
  return [
    `lab "${spec.name}" on ${spec.subnet} (bridge ${state.plan.bridge}), files in ${spec.dir}:`,
    ...lines,
    ...(spec.loginUser ? [`  logging in as ${spec.loginUser} (passwordless sudo; root's SSH login refused): cluster.yaml says ssh.user: ${spec.loginUser}`] : []),
    `Next: cd ${spec.dir} && hardway inventory   |   hardway lab ssh ${state.plan.machines.at(-1)!.hostname}${spec.name === DEFAULT_LAB ? '' : ` --name ${spec.name}`}`,
  ].join('\n');
}

/** A lab as --json shows it. */
function labJson(state: LabState) {
  const { spec, bridge, machines } = state.plan;
  return { lab: spec.name, subnet: spec.subnet, bridge, dir: spec.dir, machines: machines.map(({ hostname, ip, role }) => ({ hostname, ip, role })) };
}

/** `hardway lab up`. */
export const labUpCommand: CommandModule = {
  name: 'lab up',
  details: [
    'Builds a Debian 12 root once (debootstrap, about 4 minutes; cached under ~/.cache/hardway), then boots',
    'each machine on an overlay of it: servers at .10, .11..., workers node-0, node-1... at .20, .21...',
    '(one server is named "server", several are server-0, server-1...). Writes machines.txt, cluster.yaml,',
    'id_ed25519, known_hosts and ssh_config into DIR, so "cd DIR && hardway ..." needs no flags.',
    'Needs root. Nothing leaves the lab: no NAT, no route out, cloud-init reads only its local seed.',
    '',
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
    dir: { type: 'string', arg: 'DIR', description: 'the project directory to write (default: ./lab, or ./lab-NAME for other names)' },
    registry: { type: 'boolean', description: `a registry machine too (docker-registry at .${REGISTRY_OFFSET}) with DIR/images/ in it` },
    'login-user': { type: 'string', arg: 'NAME', description: 'log in as NAME (passwordless sudo, the lab key) as on a cloud image; root\'s SSH login refused' },
    'dry-run': { type: 'boolean', description: "on a running lab: show what lab up would change on its registry machine (the lab-registry step's plan, with diffs); change nothing" },
    json: jsonOption('{ok, lab, subnet, bridge, dir, machines: [{hostname, ip, role}], lines}; the progress goes to stderr'),
  },
  examples: [
    ['sudo hardway lab up', 'a server and two workers, their project in ./lab'],
    ['sudo hardway lab up --name ha --servers 3 --subnet 10.240.1.0/24', 'three control-plane machines and two workers, in ./lab-ha'],
    ['sudo hardway lab up --registry', 'with a registry machine holding the images of lab/images/'],
    ['sudo hardway lab up --login-user debian', 'machines as cloud images come: hardway logs in as debian and raises its commands with sudo -n'],
  ],
  jsonFields: { machines: [], lines: [] },
  async run(ctx) {
    checkAccess(ctx, 'lab up', true);
    const name = ctx.values.name as string;
    const dir = resolve(ctx.cwd, (ctx.values.dir as string | undefined) ?? defaultDir(name));
    const spec = {
      name, servers: wholeNumber(ctx, 'servers'), workers: wholeNumber(ctx, 'workers'), subnet: ctx.values.subnet as string, dir,
      ...(ctx.values.registry ? { registry: true } : {}),
      ...loginUserOf(ctx.values['login-user'] as string | undefined),
    };
    let state: LabState | undefined;
    if (ctx.values['dry-run'] === true) {
      return reportLines(ctx, async ({ stdout }) => {
        const result = await labUpDryRun(spec, pathsOf(ctx));
        state = result.state;
        const registry = result.state.plan.machines.find((m) => m.role === 'registry');
        for (const line of result.plan) say(stdout, line);
        say(stdout, !registry ? `lab "${spec.name}" runs and has no registry machine: lab up would change nothing; nothing was changed`
          : result.changes ? `dry run: lab up would make ${result.changes} change(s) on ${registry.hostname} (lab-registry); nothing was changed`
            : `dry run: lab up would change nothing on ${registry.hostname} (lab-registry); nothing was changed`);
        return 0;
      }, () => (state ? labJson(state) : {}));
    }
    return reportLines(ctx, async ({ stdout }) => {
      const result = await labUp(spec, pathsOf(ctx), progressOf(ctx));
      state = result.state;
      for (const line of result.hostChanges) say(stdout, line);
      for (const line of result.registry) say(stdout, line);
      if (result.alreadyRunning) say(stdout, 'already running, nothing to do:');
      say(stdout, describeLab(result.state));
      return 0;
    }, () => (state ? labJson(state) : {}));
  },
};

/** The spec's loginUser from --login-user (root, or none given: root logs in). */
function loginUserOf(given: string | undefined): { loginUser?: string } {
  const user = given === undefined ? undefined : checkLoginUser(given);
  return user === undefined ? {} : { loginUser: user };
}

/** `hardway lab status`. */
export const labStatusCommand: CommandModule = {
  name: 'lab status',
  options: { ...NAME, json: jsonOption('{ok, labs: [{name, subnet, bridge, dir, machines: [...]}]}, one lab or, without --name, every lab') },
  details: 'Without --name: the only lab; with several labs on this host, every lab.',
  examples: [
    ['sudo hardway lab status', 'every lab on this host, each machine with its address, state and SSH'],
    ['sudo hardway lab status --name demo --json', 'the lab "demo", as one JSON object'],
  ],
  jsonFields: { labs: [] },
  async run(ctx) {
    checkAccess(ctx, 'lab status', false);
    const paths = pathsOf(ctx);
    const name = ctx.values.name as string | undefined;
    const labs = listLabs(paths).filter((l) => readState(paths, l) !== undefined);
    const every = name === undefined && labs.length > 1;
    const states = every ? labs.map((l) => readState(paths, l)!) : [resolveLab(paths, name)];
    const statuses = await Promise.all(states.map((s) => labStatus(s, paths)));
    // One object on one line whatever the number of labs, so a script reads one shape.
    if (ctx.values.json) sayJson(ctx.stdout, { ok: true, labs: statuses });
    else say(ctx.stdout, statuses.map(formatStatus).join('\n\n'));
    return 0;
  },
};

/** `hardway lab ssh`. */
export const labSshCommand: CommandModule = {
  name: 'lab ssh',
  args: '[MACHINE] [-- COMMAND...]',
  details: "Runs the system ssh with the lab's ssh_config (strict host-key checking). Everything after -- is the command, options included.",
  options: { ...NAME, ...NODE },
  examples: [
    ['sudo hardway lab ssh node-0', 'a shell on node-0'],
    ['sudo hardway lab ssh --node server -- systemctl status kube-apiserver --no-pager', 'run one command there'],
  ],
  async run(ctx) {
    checkAccess(ctx, 'lab ssh', false);
    const { machine, rest: command } = machineOf(ctx, 'lab ssh', true);
    const state = resolveLab(pathsOf(ctx), ctx.values.name as string | undefined);
    findMachine(state.plan, machine);
    const args = ['-F', join(state.plan.spec.dir, LAB_FILES.sshConfig), machine, ...command];
    const inherit = ctx.stdout === process.stdout;
    return await new Promise<number>((done, fail) => {
      const child = spawn('ssh', args, { stdio: inherit ? 'inherit' : ['ignore', 'pipe', 'pipe'], env: ctx.env });
      child.stdout?.pipe(ctx.stdout, { end: false });
      child.stderr?.pipe(ctx.stderr, { end: false });
      child.on('error', fail);
      child.on('close', (code) => done(code ?? 1));
    });
  },
};

/** A lab command that acts on one machine of a lab: resolves the lab and the machine, then `act` says what happened and whether it changed anything. */
function machineCommand(name: string, example: string, act: (state: LabState, ctx: CliContext, machine: string) => Promise<[string, boolean]>): CommandModule {
  return {
    name,
    args: '[MACHINE]',
    options: { ...NAME, ...NODE, json: jsonOption('{ok, machine, changed, lines}') },
    examples: [[`sudo hardway ${name} node-1`, example], [`sudo hardway ${name} --node node-1 --name demo`, 'the same in the lab "demo"']],
    jsonFields: { lines: [] },
    async run(ctx) {
      checkAccess(ctx, name, true);
      const { machine } = machineOf(ctx, name, false);
      const state = resolveLab(pathsOf(ctx), ctx.values.name as string | undefined);
      let changed = false;
      return reportLines(ctx, async ({ stdout }) => {
        const [line, did] = await act(state, ctx, machine);
        changed = did;
        say(stdout, line);
        return 0;
      }, () => ({ machine, changed }));
    },
  };
}

/** `hardway lab reboot`. */
export const labRebootCommand = machineCommand('lab reboot', 'reboot node-1 and wait until it answers over SSH', async (state, ctx, machine) => {
  await labRebootMachine(state, pathsOf(ctx), machine, progressOf(ctx));
  return [`${machine} rebooted and answers over SSH`, true];
});

/** `hardway lab stop`. */
export const labStopCommand = machineCommand('lab stop', 'stop node-1 (a clean shutdown)', async (state, ctx, machine) =>
  (await labStopMachine(state, pathsOf(ctx), machine)) ? [`${machine} stopped`, true] : [`${machine} was not running, nothing to do`, false]);

/** `hardway lab start`. */
export const labStartCommand = machineCommand('lab start', 'start node-1 and wait until it answers over SSH', async (state, ctx, machine) =>
  (await labStartMachine(state, pathsOf(ctx), machine, progressOf(ctx)))
    ? [`${machine} started and answers over SSH`, true]
    : [`${machine} was already running, nothing to do`, false]);

/** `hardway lab down`. */
export const labDownCommand: CommandModule = {
  name: 'lab down',
  details: [
    'Stops every machine of the lab and removes its overlays (with all that ran on them: the cluster), its bridge and mounts.',
    'Leaves the cached root filesystem and the files in the lab directory. Safe to run again, and after a failed "lab up".',
    'It runs only with --yes (--dry-run says what it would remove).',
  ].join('\n'),
  options: {
    ...NAME,
    all: { type: 'boolean', description: 'take down every lab on this host' },
    'dry-run': { type: 'boolean', description: 'say what would be removed; change nothing' },
    yes: yesOption("the lab's machines and all that ran on them are removed"),
    json: jsonOption('{ok, lines}, as printed without --json'),
  },
  examples: [
    ['sudo hardway lab down --dry-run', 'what would be removed'],
    ['sudo hardway lab down --name demo --yes', 'remove the lab "demo"'],
  ],
  jsonFields: { lines: [] },
  run: (ctx) => reportLines(ctx, labDownNow),
};

/** `hardway lab down` once its options are read. */
async function labDownNow(ctx: CliContext): Promise<number> {
  const dryRun = ctx.values['dry-run'] === true;
  checkAccess(ctx, 'lab down', !dryRun);
  const paths = pathsOf(ctx);
  const labs = listLabs(paths);
  const chosen = ctx.values.all ? labs : ctx.values.name !== undefined ? [ctx.values.name as string] : labs.length > 1 ? undefined : [labs[0] ?? DEFAULT_LAB];
  if (!chosen) throw new InputError(`several labs on this host: ${labs.join(', ')}`, 'pass --name NAME, or --all to take every lab down');
  const present = chosen.filter((l) => labs.includes(l));
  if (present.length === 0 && !ctx.values.all) {
    say(ctx.stdout, `no lab named "${chosen[0]}" on this host, nothing to do`);
    return 0;
  }
  if (dryRun) {
    for (const lab of present) say(ctx.stdout, describeLabDown(paths, lab));
    if (present.length === 0) say(ctx.stdout, 'no lab on this host, nothing to do');
    return 0;
  }
  if (ctx.values.yes !== true) {
    throw needsYes(ctx, 'lab down', `removes ${present.map((l) => `lab "${l}"`).join(', ') || 'every lab'}: its machines and the cluster on them`);
  }
  await checkLabHost();
  if (ctx.values.all) {
    const lines = await labDownAll(paths);
    say(ctx.stdout, lines.length ? lines.join('\n') : 'no lab on this host, nothing to do');
    return 0;
  }
  say(ctx.stdout, await labDown(paths, present[0]!));
  return 0;
}
