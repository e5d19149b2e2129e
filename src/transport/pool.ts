// Transports for a run: one SSH connection per machine, opened in parallel, sharing one
// known_hosts, and closed together at the end.
import { homedir, userInfo } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import type { SshSettings } from '../cluster-settings.ts';
import type { Machine } from '../inventory.ts';
import type { RetryPolicy } from './connect.ts';
import { resolveRoute } from './endpoint.ts';
import { KnownHosts } from './known-hosts.ts';
import { Semaphore } from './semaphore.ts';
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
  /** Time for TCP connect + SSH handshake + auth, per attempt (default 20 s). */
  readyTimeoutMs?: number;
  /** SSH keepalive period (default 5 s); keepaliveCountMax unanswered ones drop the connection (default 3). */
  keepaliveIntervalMs?: number;
  keepaliveCountMax?: number;
  /** Default per-command time limit (default 10 min); ExecOptions.timeoutMs overrides it. */
  commandTimeoutMs?: number;
  /** Channels open at once per connection (default 8, below OpenSSH's MaxSessions 10). */
  maxChannels?: number;
  /** Backoff for connection failures (default 4 attempts, 500 ms doubling to at most 5 s). */
  retry?: Partial<RetryPolicy>;
  /** Connections opened at once by connectAll (default 10). */
  concurrency?: number;
  /** Receives connection events (retries, pins, reconnects); never commands' data or secrets. */
  log?: (line: string) => void;
}

/** Every machine's transport for one run. */
export interface TransportPool {
  /** The transport of a machine by hostname (connects on first use if connectAll could not). */
  get(hostname: string): SshTransport;
  /** Machines whose connection failed in connectAll, with the error (HostKeyError, AuthError, ConnectError...). */
  readonly failures: Map<string, Error>;
  readonly transports: SshTransport[];
  /** Closes every connection. */
  close(): Promise<void>;
}

/** Opens one connection per machine in parallel; a machine that fails is recorded in `failures`, not thrown. */
export async function connectAll(machines: Machine[], ssh: SshSettings, opts: TransportOptions): Promise<TransportPool> {
  const knownHosts = new KnownHosts(knownHostsPath(ssh, opts));
  // Built up front: a bad identity file or ssh config is an input error for the whole run.
  const transports = machines.map((m) => createTransport(m, ssh, opts, knownHosts));
  const failures = new Map<string, Error>();
  const gate = new Semaphore(opts.concurrency ?? 10);
  await Promise.all(transports.map((t) => gate.run(() => t.connect().catch((e: Error) => void failures.set(t.machine, e)))));
  const byName = new Map(transports.map((t) => [t.machine, t]));
  return {
    failures,
    transports,
    get(hostname) {
      const t = byName.get(hostname);
      if (!t) throw new RangeError(`no transport for machine ${hostname}`);
      return t;
    },
    async close() {
      await Promise.all(transports.map((t) => t.close()));
    },
  };
}

/** Opens one machine's connection; rejects with its HostKeyError, AuthError or ConnectError. */
export async function openTransport(machine: Machine, ssh: SshSettings, opts: TransportOptions, knownHosts?: KnownHosts): Promise<SshTransport> {
  const t = createTransport(machine, ssh, opts, knownHosts ?? new KnownHosts(knownHostsPath(ssh, opts)));
  try {
    await t.connect();
  } catch (e) {
    await t.close();
    throw e;
  }
  return t;
}

/** Builds a machine's transport without connecting; it connects on first use. */
export function createTransport(machine: Machine, ssh: SshSettings, opts: TransportOptions, knownHosts: KnownHosts): SshTransport {
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
  return new SshTransport({
    route,
    connect: {
      machine: machine.hostname,
      knownHosts,
      acceptNewHostKeys: opts.acceptNewHostKeys ?? false,
      agentSocket: (opts.env ?? process.env).SSH_AUTH_SOCK || undefined,
      readyTimeoutMs: opts.readyTimeoutMs ?? 20_000,
      keepaliveIntervalMs: opts.keepaliveIntervalMs ?? 5_000,
      keepaliveCountMax: opts.keepaliveCountMax ?? 3,
      log: opts.log ?? (() => undefined),
    },
    retry: {
      attempts: opts.retry?.attempts ?? 4,
      baseDelayMs: opts.retry?.baseDelayMs ?? 500,
      maxDelayMs: opts.retry?.maxDelayMs ?? 5_000,
      sleep: opts.retry?.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms))),
    },
    commandTimeoutMs: opts.commandTimeoutMs ?? 600_000,
    maxChannels: opts.maxChannels ?? 8,
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
