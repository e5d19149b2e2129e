// pin-hosts: every machine knows every machine by name, and keeps knowing it after cloud-init
// regenerates /etc/hosts on boot.
//
// On each machine:
// - The hostname becomes its short name (hostnamectl where systemd runs, else `hostname` and
//   /etc/hostname).
// - /etc/hosts gets one marked block with every machine's `IP FQDN HOSTNAME` line, replaced in
//   place, never appended twice. The block sits before the first address line of the file, so the
//   machine's own names resolve to its cluster IP first and `hostname -f` gives the inventory FQDN
//   whatever lines follow.
// - The 127.0.1.1 rule: Debian maps a machine's own name to 127.0.1.1 when it has no permanent IP;
//   a cluster machine has one, and the block already maps its names to it (Debian's own advice for
//   machines with a permanent address). So a missing 127.0.1.1 line is left missing, and a line
//   naming this machine (its hostname or FQDN, as cloud-init writes it) is kept. A 127.0.1.1 line
//   that names neither, or that names another cluster machine (a stale name from an image or an
//   old hostname), is rewritten to `127.0.1.1 FQDN HOSTNAME`: otherwise that stale name would
//   still resolve to this machine's loopback.
// - Where cloud-init is installed, the same block goes into its hosts template for the machine's
//   distribution (hosts.<osfamily>.tmpl), after the `## template:jinja` header and comments and
//   before the first address line or Jinja statement, so a regenerated /etc/hosts has it in the
//   same place. The block holds no `{{`, `{%`, `{#` or `$`, so Jinja and cloud-init's basic
//   templates copy it verbatim.
// - Where cloud-init manages /etc/hosts and the plan writes it or the template, the plan ends with
//   `cloud-init single --name update_etc_hosts --frequency always`, which regenerates it (a write,
//   so it is a change: --dry-run shows it); the engine's re-plan then proves that the regenerated
//   file needs nothing. verify() only reads: every machine's hostname and FQDN must resolve
//   (`getent hosts`) to its IP first. `--local` puts the block (only) into the jumpbox's
//   /etc/hosts and checks the names there.
import { createHash } from 'node:crypto';
import { FailureError } from '../errors.ts';
import type { Inventory } from '../inventory.ts';
import { ANY, HOSTS_MARKERS } from '../layout.ts';
import { hostsBlock } from '../render/hosts.ts';
import { sh } from '../shell.ts';
import { changesForFile } from '../engine/desired.ts';
import type { FileFact, Facts, ProbeResult } from '../engine/facts.ts';
import type { Change, HostContext, ChangeStep, StepContext, VerifyContext } from '../engine/types.ts';
import { cloudInitFacts, placeBlock, pinLoopbackName, TEMPLATE_FAMILIES } from './pin-hosts-text.ts';
import type { ProbeAnswer } from '../probes/probe.ts';
import { cloudConfigKeys, cloudInitInstalled, hostname, hostnamectlWorks, namesResolved } from '../probes/names.ts';
import { flagOption } from './options.ts';

/** The pin-hosts step. */
export const pinHostsStep: ChangeStep = {
  name: 'pin-hosts',
  title: "Pin every machine name in /etc/hosts and cloud-init's hosts template",
  targets: (inv) => inv.machines,
  plan: planMachine,
  verify: (ctx) => checkNames(ctx, ctx.inventory),
  unconverged: (applied, again, host) =>
    applied.some((c) => c.kind === 'exec' && c.cmd.text === REGENERATE_HOSTS.text)
      ? new FailureError(
        `${host}: after cloud-init regenerated /etc/hosts from its template, pin-hosts would change it again: ${again.map((c) => (c.kind === 'put' ? c.path : c.cmd.text)).join(', ')}`,
        'cloud-init renders a 127.0.1.1 line or names that disagree with machines.txt; check its hostname/fqdn settings',
      )
      : undefined,
  jumpbox: {
    when: (options) => flagOption(options, 'local'),
    plan: planJumpbox,
    verify: (ctx) => checkNames(ctx, ctx.inventory),
  },
};

async function planMachine(ctx: StepContext): Promise<Change[]> {
  const { machine, inventory, facts } = ctx;
  const block = hostsBlock(inventory);
  const ci = await readCloudInit(facts);
  const [hosts, hostname] = [ci.files.get(ANY.hosts)!, ci.files.get(ANY.hostname)!];
  const changes: Change[] = [];

  const hostsNow = text(hosts);
  const hostsWant = pinLoopbackName(placeBlock(hostsNow, block, HOSTS_MARKERS), machine, inventory);
  changes.push(...fileChange(ANY.hosts, hostsWant, hosts, 0o644, 'root:root'));

  if (ci.present) {
    const tmplPath = ANY.cloudHostsTemplate(ci.family);
    const tmpl = ci.files.get(tmplPath) ?? (await facts.read([tmplPath])).get(tmplPath)!;
    if (tmpl.exists && !tmpl.notFile) {
      const want = placeBlock(text(tmpl), block, HOSTS_MARKERS);
      changes.push(...fileChange(tmplPath, want, tmpl, tmpl.mode! & 0o7777, tmpl.owner!));
    } else {
      ctx.log.debug(`cloud-init is installed but ${tmplPath} does not exist: only /etc/hosts is pinned`);
    }
  }

  const name = machine.hostname;
  const running = ci.probes.hostname;
  const stat = text(hostname).trim();
  if (ci.probes.hostnamectl) {
    if (running !== name || stat !== name) {
      changes.push({ kind: 'exec', cmd: sh`hostnamectl set-hostname ${name}`, reason: `hostname is "${running}" (/etc/hostname "${stat}"), want "${name}"` });
    }
  } else {
    changes.push(...fileChange(ANY.hostname, `${name}\n`, hostname, 0o644, 'root:root'));
    if (running !== name) changes.push({ kind: 'exec', cmd: sh`hostname ${name}`, reason: `hostname is "${running}", want "${name}"` });
  }
  // Last, as a reboot would: cloud-init rewrites /etc/hosts from the template just written.
  const wrote = changes.some((c) => c.kind === 'put' && (c.path === ANY.hosts || c.path.startsWith('/etc/cloud/templates/')));
  if (wrote && ci.present && ci.managesHosts) {
    changes.push({ kind: 'exec', cmd: REGENERATE_HOSTS, reason: 'cloud-init manages /etc/hosts: regenerate it from the template now, as every boot will' });
  }
  return changes;
}

/** cloud-init's regeneration of /etc/hosts from its template, as at boot. */
const REGENERATE_HOSTS = sh`cloud-init single --name update_etc_hosts --frequency always`;

async function planJumpbox(ctx: HostContext): Promise<Change[]> {
  const hosts = (await ctx.facts.read([ANY.hosts])).get(ANY.hosts)!;
  const want = placeBlock(text(hosts), hostsBlock(ctx.inventory), HOSTS_MARKERS);
  return fileChange(ANY.hosts, want, hosts, hosts.exists ? hosts.mode! & 0o7777 : 0o644, hosts.owner ?? 'root:root');
}

/** Every machine's hostname and FQDN must resolve to its IP first, in one remote command. */
async function checkNames(ctx: HostContext, inv: Inventory): Promise<void> {
  const names = inv.machines.flatMap((m) => [[m.hostname, m.ip], [m.fqdn, m.ip]] as const);
  // One command for every name: a probe per name costs several processes each on every machine.
  const { answers } = await ctx.facts.ask({ answers: namesResolved.ask(names.map(([n]) => n)) });
  const wrong = names.flatMap(([n, ip]) => {
    const first = answers.get(n) ?? '';
    return first === ip ? [] : [`${n} -> ${first || 'nothing'} (want ${ip})`];
  });
  if (wrong.length) {
    throw new FailureError(`${ctx.host}: names do not resolve as pinned: ${wrong.join('; ')}`, 'check /etc/nsswitch.conf (hosts: files first) and /etc/hosts on that machine');
  }
}

interface CloudInitState {
  files: Map<string, FileFact>;
  probes: { hostname: string; hostnamectl: boolean; cloudInit: boolean; cloudCfg: ProbeAnswer };
  present: boolean;
  family: string;
  managesHosts: boolean;
}

/** Everything the plan needs but the template, in one round trip. */
async function readCloudInit(facts: Facts): Promise<CloudInitState> {
  // Every family's hosts template too: the family is known only from these answers, and reading
  // a template that is not there costs the machine no process (one round trip, not two).
  const paths = [ANY.hosts, ANY.hostname, '/etc/os-release', ...TEMPLATE_FAMILIES.map(ANY.cloudHostsTemplate)];
  const asked = { hostname: hostname.ask(), hostnamectl: hostnamectlWorks.ask(), cloudInit: cloudInitInstalled.ask(), cloudCfg: cloudConfigKeys.ask() };
  const keys = Object.keys(asked) as (keyof typeof asked)[];
  const answers = await facts.batch([...paths.map((path) => ({ op: 'R' as const, path })), ...keys.map((k) => asked[k])]);
  const files = new Map(paths.map((p, i) => [p, answers[i] as FileFact]));
  const probes = Object.fromEntries(keys.map((k, i) => [k, asked[k].parse(answers[paths.length + i] as ProbeResult)])) as CloudInitState['probes'];
  const ci = cloudInitFacts(probes.cloudCfg.stdout, text(files.get('/etc/os-release')!));
  return { files, probes, present: probes.cloudInit, ...ci };
}

function text(f: FileFact): string {
  // Never rewrite a file we could not read whole: that would drop its other lines.
  if (f.tooLarge) throw new FailureError(`${f.path} is larger than 1 MiB; refusing to edit it`, 'shrink the file by hand, then rerun');
  return f.content?.toString('utf8') ?? '';
}

/** A put of `want` where content, mode or owner differ from the read file. */
function fileChange(path: string, want: string, now: FileFact, mode: number, owner: string): Change[] {
  const content = Buffer.from(want);
  const sha256 = now.content ? createHash('sha256').update(now.content).digest('hex') : undefined;
  return changesForFile({ path, content, mode, owner }, { ...now, sha256 });
}
