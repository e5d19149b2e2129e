// Opening one machine's SSH transport from the inventory, cluster.yaml's ssh settings and
// ~/.ssh/config. The run's one pool of connections is src/engine/connections.ts.
import { homedir, userInfo } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { becomeOf, DEFAULT_CONNECT_TIMEOUT_S, type SshSettings } from '../cluster-settings.ts';
import type { Machine } from '../inventory.ts';
import type { RetryPolicy } from './connect.ts';
import { resolveRoute } from './endpoint.ts';
import { hostKeyNames, KnownHosts } from './known-hosts.ts';
import { SshTransport } from './ssh.ts';

/** How the engine wants machines reached; everything but `dir` has a default. */
export interface TransportOptions {
  /** The project directory (Inventory.dir): cluster.yaml's ssh paths are relative to it. */
  dir: string;
  /** Private keys given with `-i`, offered first. */
  identityFiles?: string[];
  /** Pin the host key of a machine not yet in known_hosts instead of refusing it. */
  acceptNewHostKeys?: boolean;
  /** Read for SSH_AUTH_SOCK (default process.env). */
  env?: NodeJS.ProcessEnv;
  /** Home directory for ~ and the default ~/.ssh/config (default os.homedir()). */
  home?: string;
  /** The ssh config to read when cluster.yaml has no ssh.configFile (default ~/.ssh/config). */
  sshConfigFile?: string;
  /** Where relative `-i` paths are resolved (default process.cwd()). */
  cwd?: string;
  /** Time for TCP connect + SSH handshake + auth, per attempt (default cluster.yaml's ssh.connectTimeout, 10 s). */
  readyTimeoutMs?: number;
  /** SSH keepalive period (default 5 s); keepaliveCountMax unanswered ones drop the connection (default 3). */
  keepaliveIntervalMs?: number;
  keepaliveCountMax?: number;
  /** Default per-command time limit (default 10 min); ExecOptions.timeoutMs overrides it. */
  commandTimeoutMs?: number;
  /** Channels open at once per connection (default 8, below OpenSSH's MaxSessions 10). */
  maxChannels?: number;
  /** Backoff for connection failures (default 4 attempts, 500 ms doubling to at most 5 s, 34 s in all at most). */
  retry?: Partial<RetryPolicy>;
  /** Receives connection events (retries, pins, reconnects); never commands' data or secrets. */
  log?: (line: string) => void;
  /** Receives what a person watching is told at once (connecting, each retry); see ConnectContext. */
  progress?: (line: string) => void;
}

/** Opens one machine's connection; rejects with its HostKeyError, AuthError or ConnectError. */
export async function openTransport(machine: Machine, ssh: SshSettings, opts: TransportOptions, knownHosts?: KnownHosts, hostKeyAlias?: string): Promise<SshTransport> {
  const t = createTransport(machine, ssh, opts, knownHosts ?? new KnownHosts(knownHostsPath(ssh, opts)), hostKeyAlias);
  try {
    await t.connect();
  } catch (e) {
    await t.close();
    throw e;
  }
  return t;
}

/** Builds a machine's transport without connecting; it connects on first use. `hostKeyAlias`: the one name its host key is looked up under. */
export function createTransport(machine: Machine, ssh: SshSettings, opts: TransportOptions, knownHosts: KnownHosts, hostKeyAlias?: string): SshTransport {
  const home = opts.home ?? homedir();
  const cwd = opts.cwd ?? process.cwd();
  const route = resolveRoute(machine, ssh, {
    dir: opts.dir,
    identityFiles: opts.identityFiles,
    sshConfigFile: opts.sshConfigFile,
    home,
    cwd,
    localUser: localUser(),
  });
  // As ssh's HostKeyAlias: the key is the one pinned under that name, whatever the address dialed.
  if (hostKeyAlias !== undefined) route.target.hostKeyNames = hostKeyNames([hostKeyAlias], route.target.port);
  return new SshTransport({
    route,
    connect: {
      machine: machine.hostname,
      knownHosts,
      acceptNewHostKeys: opts.acceptNewHostKeys ?? false,
      agentSocket: (opts.env ?? process.env).SSH_AUTH_SOCK || undefined,
      readyTimeoutMs: opts.readyTimeoutMs ?? (ssh.connectTimeout ?? DEFAULT_CONNECT_TIMEOUT_S) * 1000,
      keepaliveIntervalMs: opts.keepaliveIntervalMs ?? 5_000,
      keepaliveCountMax: opts.keepaliveCountMax ?? 3,
      log: opts.log ?? (() => undefined),
      ...(opts.progress ? { progress: opts.progress } : {}),
    },
    retry: {
      attempts: opts.retry?.attempts ?? 4,
      baseDelayMs: opts.retry?.baseDelayMs ?? 500,
      maxDelayMs: opts.retry?.maxDelayMs ?? 5_000,
      // A machine that accepts TCP but never speaks SSH: the default 10 s handshakes and pauses stay under 35 s in all.
      totalMs: opts.retry?.totalMs ?? Math.max(34_000, (ssh.connectTimeout ?? DEFAULT_CONNECT_TIMEOUT_S) * 1000),
      sleep: opts.retry?.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms))),
    },
    commandTimeoutMs: opts.commandTimeoutMs ?? 600_000,
    maxChannels: opts.maxChannels ?? 8,
    raise: { user: ssh.user, become: becomeOf(ssh) },
  });
}

/** The project's known_hosts: cluster.yaml ssh.knownHosts (default `known_hosts`) relative to the project dir. */
export function knownHostsPath(ssh: SshSettings, opts: Pick<TransportOptions, 'dir' | 'home'>): string {
  const p = ssh.knownHosts.startsWith('~/') ? join(opts.home ?? homedir(), ssh.knownHosts.slice(2)) : ssh.knownHosts;
  return isAbsolute(p) ? p : resolve(opts.dir, p);
}

function localUser(): string {
  try {
    return userInfo().username;
  } catch {
    return process.env.USER ?? 'root';
  }
}
