// `hardway multipass ...`: Multipass VMs as cluster machines, launched with hardway's cloud-init
// user-data and pinned host keys. The work is in src/multipass/; these are the options, the
// messages and the exit codes.
import { join, resolve } from 'node:path';
import { commandLine, jsonOption, needsYes, say, yesOption, type CommandModule, type CliContext, type OptionSpec } from '../cli/command.ts';
import { reportLines } from '../cli/json-output.ts';
import { errorJson, formatError, InputError } from '../errors.ts';
import { MultipassClient, systemMultipass } from '../multipass/client.ts';
import { describeChanges } from '../multipass/addresses.ts';
import { describeDown, describeDownPlan, multipassDown } from '../multipass/down.ts';
import { DEFAULT_PREFIX, defaultDir, defaultStateDir } from '../multipass/names.ts';
import { FILES } from '../multipass/outputs.ts';
import { MAX_CPUS, MAX_SERVERS, MAX_TIMEOUT_S, MAX_WORKERS } from '../multipass/plan.ts';
import { sshProbe, SYSTEM_CLOCK } from '../multipass/probe.ts';
import { resolvePrefix } from '../multipass/record.ts';
import { formatStatus, multipassStatus, statusProblem } from '../multipass/status.ts';
import { multipassUp, type MultipassDeps } from '../multipass/up.ts';

const NAME: Record<string, OptionSpec> = {
  name: { type: 'string', arg: 'PREFIX', description: `the VMs' name prefix (default: the only one hardway launched here, else "${DEFAULT_PREFIX}")` },
};

const STATE_NOTE = 'Records of launched VMs: $HARDWAY_MULTIPASS_STATE or ${XDG_STATE_HOME:-~/.local/state}/hardway/multipass.';

function depsOf(ctx: CliContext): MultipassDeps {
  return {
    client: new MultipassClient(systemMultipass(ctx.env)),
    stateDir: defaultStateDir(ctx.env),
    probe: sshProbe,
    clock: SYSTEM_CLOCK,
    // With --json, stdout carries the one object: the progress goes to stderr.
    progress: { stream: ctx.values.json === true ? ctx.stderr : ctx.stdout, env: ctx.env },
  };
}

/** `hardway multipass up`. */
export const multipassUpCommand: CommandModule = {
  name: 'multipass up',
  details: [
    'Launches PREFIX-server (or PREFIX-server-0...) and PREFIX-node-0, PREFIX-node-1... one at a time with',
    'cloud-init user-data written by hardway: hostname and FQDN, root\'s key (DIR/id_ed25519, made once),',
    'manage_etc_hosts: true, a marker file, and an SSH host key generated here for each VM, so known_hosts',
    'is written before the first connection (no trust on first use). Reads the addresses from',
    '"multipass info --format json", writes the files into DIR and logs in to every VM with the pinned key.',
    'A rerun keeps the VMs it launched (starting stopped ones), launches missing ones and rewrites the',
    'files, saying which addresses changed.',
    '',
    STATE_NOTE,
  ].join('\n'),
  options: {
    name: { type: 'string', arg: 'PREFIX', default: DEFAULT_PREFIX, description: 'the VMs\' name prefix (1-32 of a-z 0-9 -, starting with a letter)' },
    servers: { type: 'string', arg: 'N', default: '1', range: [1, MAX_SERVERS], description: 'control-plane machines' },
    workers: { type: 'string', arg: 'N', default: '2', range: [0, MAX_WORKERS], description: 'worker machines' },
    'vm-image': { type: 'string', arg: 'IMAGE', default: '24.04', formerly: 'image', description: 'the Ubuntu image the VMs are launched from (see "multipass find")' },
    cpus: { type: 'string', arg: 'N', default: '2', range: [1, MAX_CPUS], description: 'CPUs of each VM' },
    memory: { type: 'string', arg: 'SIZE', default: '2G', description: 'memory of each VM' },
    disk: { type: 'string', arg: 'SIZE', default: '20G', description: 'disk of each VM' },
    dir: { type: 'string', arg: 'DIR', description: 'the project directory to write (default: ./multipass, or ./multipass-PREFIX for other names)' },
    timeout: { type: 'string', arg: 'SECONDS', default: '600', range: [1, MAX_TIMEOUT_S], description: 'for each launch, and for the addresses and SSH logins' },
    json: jsonOption('{ok, lines}, as printed without --json; the progress goes to stderr'),
  },
  examples: [
    ['hardway multipass up', 'hardway-server, hardway-node-0 and hardway-node-1 (Ubuntu 24.04), their project in ./multipass'],
    ['hardway multipass up --name k8s --workers 3 --vm-image 22.04 --memory 4G', 'k8s-server and three workers on Ubuntu 22.04, in ./multipass-k8s'],
  ],
  jsonFields: { lines: [] },
  run: (ctx) => reportLines(ctx, async (ctx) => {
    const prefix = ctx.values.name as string;
    const dir = resolve(ctx.cwd, (ctx.values.dir as string | undefined) ?? defaultDir(prefix));
    const n = (o: string) => Number(ctx.values[o]);
    const spec = {
      prefix, servers: n('servers'), workers: n('workers'), image: ctx.values['vm-image'] as string, cpus: n('cpus'),
      memory: ctx.values.memory as string, disk: ctx.values.disk as string, dir, timeoutS: n('timeout'),
    };
    const r = await multipassUp(spec, depsOf(ctx));
    if (r.launched.length) say(ctx.stdout, `launched: ${r.launched.join(', ')}`);
    if (r.started.length) say(ctx.stdout, `started: ${r.started.join(', ')}`);
    if (r.kept.length) say(ctx.stdout, `already running, kept: ${r.kept.join(', ')}`);
    if (r.changed.length) {
      say(ctx.stdout, 'address changed since machines.txt was written (rewritten, with known_hosts and ssh_config):');
      for (const l of describeChanges(r.changed)) say(ctx.stdout, `  ${l}`);
      say(ctx.stdout, 'the machines\' /etc/hosts still name the old addresses: run "hardway pin-hosts" in that directory');
    }
    say(ctx.stdout, `Multipass "${prefix}", files in ${dir} (every VM answered over SSH with its pinned host key):`);
    for (const v of r.vms) say(ctx.stdout, `  ${v.hostname.padEnd(10)} ${v.ip.padEnd(15)} ${v.vm}`);
    say(ctx.stdout, `Next: cd ${dir} && hardway inventory   |   ssh -F ${join(dir, FILES.sshConfig)} ${r.vms.at(-1)!.hostname}`);
    return 0;
  }),
};

/** `hardway multipass status`. */
export const multipassStatusCommand: CommandModule = {
  name: 'multipass status',
  details: [
    'Exits 1 when machines.txt no longer describes the VMs (an address changed, a VM is gone); "hardway',
    'multipass up" then rewrites it.',
    '',
    STATE_NOTE,
  ].join('\n'),
  options: { ...NAME, json: jsonOption('{ok, prefix, dir, vms: [...]} (with error when ok is false)') },
  examples: [
    ['hardway multipass status', 'the VMs hardway launched here: state, addresses, SSH'],
    ['hardway multipass status --name k8s --json', 'the VMs of prefix k8s, as JSON'],
  ],
  async run(ctx) {
    const deps = depsOf(ctx);
    const status = await multipassStatus(resolvePrefix(deps.stateDir, ctx.values.name as string | undefined), deps);
    const problem = statusProblem(status);
    if (!ctx.values.json) {
      say(ctx.stdout, formatStatus(status));
      if (problem) throw problem;
      return 0;
    }
    // One JSON object with the problem in it (a script reads the status either way); its message on stderr.
    say(ctx.stdout, JSON.stringify({ ok: !problem, ...status, ...(problem ? { error: errorJson(problem) } : {}) }, null, 2));
    if (problem) say(ctx.stderr, formatError(problem));
    return problem?.exitCode ?? 0;
  },
};

/** `hardway multipass down`. */
export const multipassDownCommand: CommandModule = {
  name: 'multipass down',
  details: [
    'Deletes and purges only VMs in hardway\'s record of the prefix; a running one must also present the host key hardway gave it',
    'and carry its marker. Others with the same prefix are left alone and named. The files of the project directory stay.',
    'It runs only with --yes (--dry-run says what it would delete).',
    '',
    STATE_NOTE,
  ].join('\n'),
  options: {
    ...NAME,
    'dry-run': { type: 'boolean', description: 'say which VMs would be deleted; change nothing' },
    yes: yesOption('the VMs and their disks are deleted and purged'),
    json: jsonOption('{ok, lines}, as printed without --json'),
  },
  examples: [
    ['hardway multipass down --dry-run', 'which VMs would be deleted'],
    ['hardway multipass down --name k8s --yes', 'delete and purge the VMs hardway launched as k8s-...'],
  ],
  jsonFields: { lines: [] },
  run: (ctx) => reportLines(ctx, async (ctx) => {
    const deps = depsOf(ctx);
    const prefix = resolvePrefix(deps.stateDir, ctx.values.name as string | undefined);
    if (ctx.values['dry-run'] === true) {
      for (const l of await describeDownPlan(prefix, deps)) say(ctx.stdout, l);
      return 0;
    }
    if (ctx.values.yes !== true) {
      throw needsYes(ctx, 'multipass down', `deletes and purges the VMs hardway launched as "${prefix}-...", with their disks`);
    }
    const { lines, error } = describeDown(prefix, await multipassDown(prefix, deps));
    for (const l of lines) say(ctx.stdout, l);
    if (error) throw error;
    return 0;
  }),
};
