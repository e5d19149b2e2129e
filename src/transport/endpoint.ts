// Where and as whom to connect to a machine: cluster.yaml's ssh settings, `-i`, and the user's
// ssh config (Host, HostName, User, Port, IdentityFile, ProxyJump) through the ssh-config parser.
import { existsSync, readFileSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { parse as parseSshConfig } from 'ssh-config';
import { InputError } from '../errors.ts';
import { defaultSettings, type SshSettings } from '../cluster-settings.ts';
import type { Machine } from '../inventory.ts';
import { hostKeyNames } from './known-hosts.ts';

/** One SSH hop: the address to dial, who to log in as, which keys to offer, how its host key is looked up. */
export interface Endpoint {
  /** How errors name this hop, e.g. `root@10.240.0.20:22` or `jump host bastion (root@192.0.2.1:22)`. */
  display: string;
  host: string;
  port: number;
  user: string;
  /** Absolute paths of private keys to offer, in order. */
  identityFiles: string[];
  /** Names this hop's key is looked up and pinned under in known_hosts (`[name]:port` off port 22). */
  hostKeyNames: string[];
}

/** The way to one machine: zero or more jump hosts, then the machine itself. */
export interface Route {
  jumps: Endpoint[];
  target: Endpoint;
}

/** Local facts endpoint resolution depends on; passed in so tests never read the real ~/.ssh. */
export interface EndpointContext {
  /** Project directory: cluster.yaml paths are relative to it. */
  dir: string;
  /** `-i` files (already absolute or relative to cwd), offered before any other key. */
  identityFiles?: string[];
  /** The ssh config to read when cluster.yaml sets no ssh.configFile (default ~/.ssh/config). */
  sshConfigFile?: string;
  home: string;
  localUser: string;
  cwd: string;
}

type Computed = Record<string, string | string[]>;
type SshConfig = ReturnType<typeof parseSshConfig>;

/** Resolves the route to a machine. Precedence: -i and non-default cluster.yaml values, then ssh config, then defaults. */
export function resolveRoute(machine: Machine, ssh: SshSettings, ctx: EndpointContext): Route {
  const config = loadSshConfig(ssh, ctx);
  const cfg = lookup(config, [machine.hostname, machine.fqdn, machine.ip]);
  const defaults = defaultSettings().ssh;
  const user = ssh.user !== defaults.user ? ssh.user : (str(cfg.user) ?? ssh.user);
  const port = ssh.port !== defaults.port ? ssh.port : portOf(str(cfg.port)) ?? ssh.port;
  const tokens = { h: machine.hostname, r: user, p: String(port), d: ctx.home, u: ctx.localUser };
  const host = str(cfg.hostname) !== undefined ? expand(str(cfg.hostname)!, tokens) : machine.ip;
  const explicit = explicitIdentities(ssh, ctx);
  const target: Endpoint = {
    display: `${user}@${host}:${port}`,
    host,
    port,
    user,
    identityFiles: withDefaults([...explicit, ...configIdentities(cfg, tokens, ctx)], ctx),
    hostKeyNames: hostKeyNames([machine.hostname, machine.fqdn, machine.ip, host], port),
  };
  const jumpSpec = ssh.jumpHost ?? str(cfg.proxyjump);
  const jumps = jumpSpec === undefined || jumpSpec === 'none'
    ? []
    : jumpSpec.split(',').map((spec) => jumpEndpoint(spec.trim(), config, explicit, ctx));
  return { jumps, target };
}

function jumpEndpoint(spec: string, config: SshConfig | undefined, explicit: string[], ctx: EndpointContext): Endpoint {
  const m = /^(?:ssh:\/\/)?(?:([^@]+)@)?([^:@/]+|\[[^\]]+\])(?::(\d+))?$/.exec(spec);
  if (!m) throw new InputError(`jump host "${spec}" is not [user@]host[:port]`, 'write it like root@bastion:22');
  const alias = m[2]!.replace(/^\[|\]$/g, '');
  const cfg = lookup(config, [alias]);
  const user = m[1] ?? str(cfg.user) ?? ctx.localUser;
  const port = portOf(m[3]) ?? portOf(str(cfg.port)) ?? 22;
  const tokens = { h: alias, r: user, p: String(port), d: ctx.home, u: ctx.localUser };
  const host = str(cfg.hostname) !== undefined ? expand(str(cfg.hostname)!, tokens) : alias;
  return {
    display: `jump host ${alias} (${user}@${host}:${port})`,
    host,
    port,
    user,
    identityFiles: withDefaults([...explicit, ...configIdentities(cfg, tokens, ctx)], ctx),
    hostKeyNames: hostKeyNames([alias, host], port),
  };
}

/** Reads cluster.yaml's ssh.configFile (must exist) or else the user's ssh config (may be absent). */
function loadSshConfig(ssh: SshSettings, ctx: EndpointContext): SshConfig | undefined {
  const file = ssh.configFile ? projectPath(ssh.configFile, ctx) : (ctx.sshConfigFile ?? join(ctx.home, '.ssh', 'config'));
  if (!existsSync(file)) {
    if (ssh.configFile) throw new InputError(`ssh.configFile ${ssh.configFile} not found (${file})`, 'fix the path in cluster.yaml (relative to the project directory)', { file: 'cluster.yaml' });
    return undefined;
  }
  return parseSshConfig(readFileSync(file, 'utf8'));
}

/** Merges the config computed for each name, first value wins (as in ssh_config); keys lower-cased. */
function lookup(config: SshConfig | undefined, names: string[]): Computed {
  const out: Computed = {};
  if (!config) return out;
  for (const name of names) {
    for (const [key, value] of Object.entries(config.compute(name))) {
      const k = key.toLowerCase();
      if (k === 'identityfile') out[k] = [...new Set([...[out[k] ?? []].flat(), ...[value].flat()])];
      else if (out[k] === undefined) out[k] = value;
    }
  }
  return out;
}

function explicitIdentities(ssh: SshSettings, ctx: EndpointContext): string[] {
  const files = [
    ...(ctx.identityFiles ?? []).map((f) => ({ path: resolve(ctx.cwd, expandHome(f, ctx.home)), from: '-i' })),
    ...(ssh.identityFile ? [{ path: projectPath(ssh.identityFile, ctx), from: 'ssh.identityFile in cluster.yaml' }] : []),
  ];
  for (const f of files) {
    if (!existsSync(f.path)) throw new InputError(`identity file ${f.path} (${f.from}) not found`, 'pass the path of an existing private key');
  }
  return files.map((f) => f.path);
}

function configIdentities(cfg: Computed, tokens: Record<string, string>, ctx: EndpointContext): string[] {
  // As ssh does, IdentityFile lines naming missing files are ignored.
  return [cfg.identityfile ?? []].flat().map((f) => resolve(ctx.cwd, expand(f, tokens))).filter((f) => existsSync(f));
}

function withDefaults(files: string[], ctx: EndpointContext): string[] {
  const unique = [...new Set(files)];
  if (unique.length > 0) return unique;
  return ['id_ed25519', 'id_ecdsa', 'id_rsa'].map((n) => join(ctx.home, '.ssh', n)).filter((f) => existsSync(f));
}

function projectPath(p: string, ctx: EndpointContext): string {
  const expanded = expandHome(p, ctx.home);
  return isAbsolute(expanded) ? expanded : resolve(ctx.dir, expanded);
}

function expandHome(p: string, home: string): string {
  return p === '~' || p.startsWith('~/') ? join(home, p.slice(1)) : p;
}

/** Expands ssh_config tokens (%h %r %p %d %u %%) and a leading ~. */
function expand(value: string, tokens: Record<string, string>): string {
  const out = value.replace(/%([%hrpdu])/g, (_, t: string) => (t === '%' ? '%' : tokens[t]!));
  return expandHome(out, tokens.d!);
}

function str(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

function portOf(v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1 || n > 65535) throw new InputError(`ssh config Port "${v}" is not a port number`, 'use 1-65535');
  return n;
}
