// `hardway multipass ...`: Multipass VMs as cluster machines, launched with hardway's cloud-init
// user-data and pinned host keys. The work is in src/multipass/; these are the options, the
// messages and the exit codes.
import { join, resolve } from 'node:path';
import { say, type CliCommand, type CliContext, type OptionSpec } from '../cli/command.ts';
import { errorJson, formatError } from '../errors.ts';
import { MultipassClient, systemMultipass } from '../multipass/client.ts';
import { describeChanges } from '../multipass/addresses.ts';
import { describeDown, multipassDown } from '../multipass/down.ts';
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
    progress: { stream: ctx.stdout, env: ctx.env },
  };
}

/** `hardway multipass up`. */
export const multipassUpCommand: CliCommand = {
  name: 'multipass up',
  summary: 'Launch Multipass VMs for the cluster and write machines.txt, cluster.yaml, known_hosts, ssh_config',
  details: [
    'Launches PREFIX-server (or PREFIX-server-0...) and PREFIX-node-0, PREFIX-node-1... one at a time with',
    'cloud-init user-data written by hardway: hostname and FQDN, root\'s key (DIR/id_ed25519, made once),',
    'manage_etc_hosts: true, a marker file, and an SSH host key generated here for each VM, so known_hosts',
    'is written before the first connection (no trust on first use). Reads the addresses from',
    '"multipass info --format json", writes the files into DIR and logs in to every VM with the pinned key.',
    'A rerun keeps the VMs it launched (starting stopped ones), launches missing ones and rewrites the',
    'files, saying which addresses changed.',
    STATE_NOTE,
  ].join('\n'),
  options: {
    name: { type: 'string', arg: 'PREFIX', default: DEFAULT_PREFIX, description: 'the VMs\' name prefix (1-32 of a-z 0-9 -, starting with a letter)' },
    servers: { type: 'string', arg: 'N', default: '1', range: [1, MAX_SERVERS], description: 'control-plane machines' },
    workers: { type: 'string', arg: 'N', default: '2', range: [0, MAX_WORKERS], description: 'worker machines' },
    image: { type: 'string', arg: 'IMAGE', default: '24.04', description: 'the Ubuntu image (see "multipass find")' },
    cpus: { type: 'string', arg: 'N', default: '2', range: [1, MAX_CPUS], description: 'CPUs of each VM' },
    memory: { type: 'string', arg: 'SIZE', default: '2G', description: 'memory of each VM' },
    disk: { type: 'string', arg: 'SIZE', default: '20G', description: 'disk of each VM' },
    dir: { type: 'string', arg: 'DIR', description: 'where to write the files (default: ./multipass, or ./multipass-PREFIX for other names)' },
    timeout: { type: 'string', arg: 'SECONDS', default: '600', range: [1, MAX_TIMEOUT_S], description: 'for each launch, and for the addresses and SSH logins' },
  },
  async run(ctx) {
    const prefix = ctx.values.name as string;
    const dir = resolve(ctx.cwd, (ctx.values.dir as string | undefined) ?? defaultDir(prefix));
    const n = (o: string) => Number(ctx.values[o]);
    const spec = {
      prefix, servers: n('servers'), workers: n('workers'), image: ctx.values.image as string, cpus: n('cpus'),
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
  },
};

/** `hardway multipass status`. */
export const multipassStatusCommand: CliCommand = {
  name: 'multipass status',
  summary: 'Show each VM hardway launched: state, addresses, the address in machines.txt, SSH',
  details: [
    'Exits 1 when machines.txt no longer describes the VMs (an address changed, a VM is gone); "hardway',
    'multipass up" then rewrites it.',
    STATE_NOTE,
  ].join('\n'),
  options: { ...NAME, json: { type: 'boolean', description: 'print JSON' } },
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
export const multipassDownCommand: CliCommand = {
  name: 'multipass down',
  summary: 'Delete and purge the VMs hardway launched (only those), keep the files in DIR',
  details: [
    'Only VMs in hardway\'s record of the prefix; a running one must also present the host key hardway gave it',
    'and carry its marker. Others with the same prefix are left alone and named.',
    STATE_NOTE,
  ].join('\n'),
  options: NAME,
  async run(ctx) {
    const deps = depsOf(ctx);
    const prefix = resolvePrefix(deps.stateDir, ctx.values.name as string | undefined);
    const { lines, error } = describeDown(prefix, await multipassDown(prefix, deps));
    for (const l of lines) say(ctx.stdout, l);
    if (error) throw error;
    return 0;
  },
};
