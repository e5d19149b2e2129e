// The SSH transport of one machine: one connection reused by every step, opened on first use and
// reopened (bounded retries) if it dropped between commands; channels capped below MaxSessions.
import type { Readable } from 'node:stream';
import type { Client, SFTPWrapper } from 'ssh2';
import { isCommand, type Command } from '../shell.ts';
import { connectWithRetry, type Connection, type ConnectContext, type RetryPolicy } from './connect.ts';
import type { Route } from './endpoint.ts';
import { AuthError, ConnectionLostError, HostKeyError, TransportError } from './errors.ts';
import { ChannelNotOpened, execOnClient } from './exec.ts';
import { Semaphore } from './semaphore.ts';
import type { ExecOptions, ExecResult, Transport, UploadOptions, UploadSource } from './types.ts';
import { CommandError } from '../errors.ts';
import { ownerCommand, parseOwnerIds, prepareDirCommand, uploadAtomic } from './upload.ts';
import { SUDO_CHECK, SudoError, shownCommand, sudoRefusal, type Raise } from './become.ts';

/** Everything an SshTransport needs, resolved by createTransport in pool.ts (which holds the defaults). */
export interface SshTransportConfig {
  route: Route;
  connect: ConnectContext;
  retry: RetryPolicy;
  commandTimeoutMs: number;
  maxChannels: number;
  /** The login user and how its commands are raised (sudo -n, or none). */
  raise: Raise;
}

/** A Transport over one SSH connection (through jump hosts if the route has any). */
export class SshTransport implements Transport {
  readonly machine: string;
  private conn: Promise<Connection> | undefined;
  private current: Client | undefined;
  /** Connections seen closing: an error on one of them means the connection was lost, not the operation. */
  private readonly dead = new WeakSet<Client>();
  /** A host-key or auth refusal is final for the run: never dial the machine again. */
  private refused: Error | undefined;
  private closed = false;
  private connections = 0;
  private readonly slots: Semaphore;
  /** The connection's one SFTP session, shared by its uploads (a session per upload started an sftp-server each). */
  private sftp: { client: Client; session: Promise<SFTPWrapper> } | undefined;
  /** What uploads already did on the current connection: directories made ready, owners' ids. */
  private readonly prepared = new Map<string, Promise<unknown>>();

  constructor(private readonly config: SshTransportConfig) {
    this.machine = config.connect.machine;
    this.slots = new Semaphore(config.maxChannels);
  }

  /** Opens the connection now (otherwise the first exec or upload does); rejects with the connection error. */
  async connect(): Promise<void> {
    await this.client();
  }

  /** Runs a command built with `sh`; a non-zero exit code is returned, not thrown. */
  exec(cmd: Command, opts: ExecOptions = {}): Promise<ExecResult> {
    if (!isCommand(cmd)) return Promise.reject(new TypeError(`${this.machine}: exec takes a Command built with sh\`\`, got ${typeof cmd}`));
    const timeoutMs = opts.timeoutMs ?? this.config.commandTimeoutMs;
    const become = this.config.raise.become;
    return this.withChannel(`command: ${cmd.text}`, (client) => execOnClient(client, this.machine, cmd, { stdin: opts.stdin, timeoutMs, become }))
      .then((r) => refusedLogin(r, this.machine, this.config.raise.user));
  }

  /** exec with a stream (an upload's file) as stdin; for uploads of a raised login (upload-raised.ts). */
  private execWithInput(cmd: Command, input: Buffer | Readable): Promise<ExecResult> {
    const opts = { stdin: input, timeoutMs: this.config.commandTimeoutMs, become: this.config.raise.become };
    return this.withChannel(`upload: ${cmd.text}`, (client) => execOnClient(client, this.machine, cmd, opts));
  }

  /** The command as it runs on the machine (with sudo -n when raised), for the run log and --dry-run. */
  describe(cmd: Command): string {
    return shownCommand(cmd.text, this.config.raise.become);
  }

  /** Uploads atomically over SFTP (see upload.ts). */
  upload(path: string, source: UploadSource, opts: UploadOptions): Promise<void> {
    const channels = {
      machine: this.machine,
      exec: (cmd: Command) => this.exec(cmd),
      prepareDir: (dir: string) => this.once(`dir ${dir}`, () => this.check(prepareDirCommand(dir))).then(() => undefined),
      ownerIds: (owner: string) => {
        const cmd = ownerCommand(owner);
        return this.once(`owner ${owner}`, async () => parseOwnerIds(await this.check(cmd), this.machine, cmd, owner));
      },
      withSftp: <T>(fn: (sftp: SFTPWrapper, gone: Promise<never>) => Promise<T>) => this.withSftp(path, fn),
      // SFTP would write as the login user: a login raised with sudo sends the bytes to a raised command.
      ...(this.config.raise.become === 'sudo' ? { execWithInput: (cmd: Command, input: Buffer | Readable) => this.execWithInput(cmd, input) } : {}),
    };
    return uploadAtomic(channels, path, source, opts);
  }

  /** Ends the connection (and its jump hosts); later use is an error. */
  async close(): Promise<void> {
    this.closed = true;
    const conn = this.conn;
    this.conn = undefined;
    if (!conn) return;
    const c = await conn.catch(() => undefined);
    if (!c || this.dead.has(c.client)) return;
    await new Promise<void>((resolve) => {
      c.client.once('close', () => resolve());
      c.client.end();
      // A half-dead socket may never report close: do not let close() hang on it.
      setTimeout(resolve, 2000).unref();
    });
  }

  private async withSftp<T>(path: string, fn: (sftp: SFTPWrapper, gone: Promise<never>) => Promise<T>): Promise<T> {
    const { client, session: sftp } = await this.retrying(`upload of ${path}`, async (c) => ({ client: c, session: await this.sessionOn(c) }));
    let done = false;
    let lostError: ConnectionLostError | undefined;
    let rejectGone: (e: Error) => void = () => {};
    const gone = new Promise<never>((_, reject) => (rejectGone = reject));
    gone.catch(() => undefined);
    const lost = (why: string) => () => {
      if (done || lostError) return;
      lostError = new ConnectionLostError(this.machine, `upload of ${path}`, why);
      rejectGone(lostError);
    };
    const onSessionEnd = lost('the SFTP session ended');
    const onClientClose = lost('the connection closed');
    // ssh2 fails the session's pending requests ("No response from server") just before 'end'.
    sftp.once('end', onSessionEnd);
    sftp.once('close', onSessionEnd);
    client.once('close', onClientClose);
    try {
      return await fn(sftp, gone);
    } catch (e) {
      throw lostError ?? e;
    } finally {
      done = true;
      // Session and connection outlive this upload: leave no listener behind (one per upload would pile up).
      sftp.removeListener('end', onSessionEnd);
      sftp.removeListener('close', onSessionEnd);
      client.removeListener('close', onClientClose);
    }
  }

  /** The shared SFTP session on this connection, opened on first use; it holds one channel slot while open. */
  private sessionOn(client: Client): Promise<SFTPWrapper> {
    if (this.sftp?.client === client) return this.sftp.session;
    const session = this.slots.acquire().then((release) =>
      new Promise<SFTPWrapper>((resolve, reject) =>
        client.sftp((err, s) => {
          if (err) {
            release();
            return reject(new ChannelNotOpened(err.message));
          }
          // An ended session takes no more requests: the next upload opens a new one.
          const forget = () => {
            if (this.sftp?.session === session) this.sftp = undefined;
          };
          s.once('end', forget);
          s.once('close', () => {
            release();
            forget();
          });
          resolve(s);
        }),
      ),
    );
    this.sftp = { client, session };
    session.catch(() => {
      if (this.sftp?.session === session) this.sftp = undefined;
    });
    return session;
  }

  /** Runs a command that must succeed; its stdout. */
  private async check(cmd: Command): Promise<string> {
    const r = await this.exec(cmd);
    if (r.code !== 0) throw new CommandError(this.machine, cmd.text, r.code, r.stderr);
    return r.stdout;
  }

  /** make() once per connection for a key; a failure is not remembered. */
  private once<T>(key: string, make: () => Promise<T>): Promise<T> {
    const known = this.prepared.get(key) as Promise<T> | undefined;
    if (known) return known;
    const p = make();
    this.prepared.set(key, p);
    p.catch(() => {
      if (this.prepared.get(key) === p) this.prepared.delete(key);
    });
    return p;
  }

  /**
   * Runs fn with a channel slot on a live connection. A channel that could not open means nothing
   * ran, so it is safe to try again: once on a new connection if the old one is gone, and a few
   * times with short pauses if sshd refused it (sshd frees a closed session only after handling all
   * the packets it read together, so a channel opened right after another closed can count as the
   * 11th session even under a cap of 8).
   */
  private withChannel<T>(what: string, fn: (client: Client) => Promise<T>): Promise<T> {
    return this.slots.run(() => this.retrying(what, fn));
  }

  /** withChannel without taking a slot: for the shared SFTP session, which takes its own. */
  private async retrying<T>(what: string, fn: (client: Client) => Promise<T>): Promise<T> {
    let reconnected = false;
    for (let refusals = 0; ; ) {
      const client = await this.client();
      try {
        return await fn(client);
      } catch (e) {
        if (!(e instanceof ChannelNotOpened)) throw e;
        const gone = this.dead.has(client) || GONE.test(e.message);
        if (gone && !reconnected) {
          reconnected = true;
          this.discard(client);
          continue;
        }
        if (!gone && refusals < CHANNEL_RETRY_DELAYS_MS.length) {
          await new Promise((r) => setTimeout(r, CHANNEL_RETRY_DELAYS_MS[refusals++]));
          continue;
        }
        throw new TransportError(this.machine, `could not open an SSH channel for ${what}: ${e.message}`);
      }
    }
  }

  /** Forgets a connection that is gone, so the next use dials again. */
  private discard(client: Client): void {
    this.dead.add(client);
    if (this.current === client) {
      this.conn = undefined;
      this.current = undefined;
      // A new connection prepares again: a crash may have left temp files since.
      this.prepared.clear();
    }
    client.end();
  }

  private async client(): Promise<Client> {
    if (this.closed) throw new TransportError(this.machine, 'transport used after close()');
    if (this.refused) throw this.refused;
    if (!this.conn) {
      const opening = connectWithRetry(this.config.route, this.config.connect, this.config.retry).then((c) => this.sudoChecked(c));
      this.conn = opening;
      opening.then(
        ({ client }) => {
          this.current = client;
          if (this.connections++ > 0) this.config.connect.log(`${this.machine}: reconnected`);
          client.on('error', (err) => this.config.connect.log(`${this.machine}: connection error: ${err.message}`));
          client.once('close', () => this.discard(client));
        },
        (e) => {
          if (this.conn === opening) this.conn = undefined;
          if (e instanceof HostKeyError || e instanceof AuthError || e instanceof SudoError) this.refused = e;
        },
      );
    }
    return (await this.conn).client;
  }

  /**
   * A login raised with sudo proves once per connection that sudo answers without a password, so
   * that a refusal is one clear error before anything runs (never a command waiting on a prompt).
   */
  private async sudoChecked(conn: Connection): Promise<Connection> {
    if (this.config.raise.become !== 'sudo') return conn;
    let r: ExecResult;
    try {
      r = await execOnClient(conn.client, this.machine, SUDO_CHECK, { timeoutMs: SUDO_CHECK_TIMEOUT_MS });
    } catch (e) {
      conn.client.end();
      throw e instanceof ChannelNotOpened ? new TransportError(this.machine, `could not open an SSH channel to check sudo: ${e.message}`) : e;
    }
    if (r.code === 0) return conn;
    conn.client.end();
    throw sudoRefusal(this.machine, this.config.raise.user, r.code, r.stderr);
  }
}

/** sudo -n answers at once; a machine slower than this is not one to build on. */
const SUDO_CHECK_TIMEOUT_MS = 30_000;

/**
 * A cloud image's root account whose authorized_keys runs only `echo Please login as the user
 * "debian" rather than the user "root".; sleep 10; exit 142`: every command fails that way. Said
 * once as what to set, instead of as the first step's failure.
 */
function refusedLogin(r: ExecResult, machine: string, user: string): ExecResult {
  if (r.code === 0) return r;
  const m = /Please login as the user "?([A-Za-z0-9_][A-Za-z0-9_.-]*)"? rather than the user "?([^"\s]+)"?/.exec(r.stdout + r.stderr);
  if (!m) return r;
  throw new TransportError(machine, `the machine refuses commands from ${user}: it says to log in as ${m[1]}`,
    `set ssh.user: ${m[1]} in cluster.yaml (every command then runs through sudo -n, which must not ask ${m[1]} for a password)`);
}

/** Pauses before asking again for a channel that sshd refused (about 3 s in all). */
const CHANNEL_RETRY_DELAYS_MS = [50, 100, 200, 400, 800, 1600];

/** ssh2's messages for a connection that is already gone when a channel is requested. */
const GONE = /^(Not connected|No response from server)$/;
