// The SSH transport of one machine: one connection reused by every step, opened on first use and
// reopened (bounded retries) if it dropped between commands; channels capped below MaxSessions.
import type { Client, SFTPWrapper } from 'ssh2';
import { isCommand, type Command } from '../shell.ts';
import { connectWithRetry, type Connection, type ConnectContext, type RetryPolicy } from './connect.ts';
import type { Route } from './endpoint.ts';
import { AuthError, ConnectionLostError, HostKeyError, TransportError } from './errors.ts';
import { ChannelNotOpened, execOnClient } from './exec.ts';
import { Semaphore } from './semaphore.ts';
import type { ExecOptions, ExecResult, Transport, UploadOptions, UploadSource } from './types.ts';
import { uploadAtomic } from './upload.ts';

/** Everything an SshTransport needs, resolved by createTransport in pool.ts (which holds the defaults). */
export interface SshTransportConfig {
  route: Route;
  connect: ConnectContext;
  retry: RetryPolicy;
  commandTimeoutMs: number;
  maxChannels: number;
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
    return this.withChannel(`command: ${cmd.text}`, (client) => execOnClient(client, this.machine, cmd, { stdin: opts.stdin, timeoutMs }));
  }

  /** Uploads atomically over SFTP (see upload.ts). */
  upload(path: string, source: UploadSource, opts: UploadOptions): Promise<void> {
    return uploadAtomic(
      { machine: this.machine, exec: (cmd) => this.exec(cmd), withSftp: (fn) => this.withSftp(path, fn) },
      path,
      source,
      opts,
    );
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

  private withSftp<T>(path: string, fn: (sftp: SFTPWrapper, gone: Promise<never>) => Promise<T>): Promise<T> {
    return this.withChannel(`upload of ${path}`, async (client) => {
      const sftp = await new Promise<SFTPWrapper>((resolve, reject) =>
        client.sftp((err, s) => (err ? reject(new ChannelNotOpened(err.message)) : resolve(s))),
      );
      let done = false;
      let onClientClose = () => {};
      const gone = new Promise<never>((_, reject) => {
        const lost = (why: string) => () => {
          if (!done) reject(new ConnectionLostError(this.machine, `upload of ${path}`, why));
        };
        onClientClose = lost('the connection closed');
        sftp.once('close', lost('the SFTP session closed'));
        client.once('close', onClientClose);
      });
      gone.catch(() => undefined);
      try {
        return await fn(sftp, gone);
      } finally {
        done = true;
        // The connection outlives this upload: leave no listener behind on it (one per upload would pile up).
        client.removeListener('close', onClientClose);
        sftp.end();
      }
    });
  }

  /**
   * Runs fn with a channel slot on a live connection. A channel that could not open means nothing
   * ran, so it is safe to try again: once on a new connection if the old one is gone, and a few
   * times with short pauses if sshd refused it (sshd frees a closed session only after handling all
   * the packets it read together, so a channel opened right after another closed can count as the
   * 11th session even under a cap of 8).
   */
  private async withChannel<T>(what: string, fn: (client: Client) => Promise<T>): Promise<T> {
    return this.slots.run(async () => {
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
    });
  }

  /** Forgets a connection that is gone, so the next use dials again. */
  private discard(client: Client): void {
    this.dead.add(client);
    if (this.current === client) {
      this.conn = undefined;
      this.current = undefined;
    }
    client.end();
  }

  private async client(): Promise<Client> {
    if (this.closed) throw new TransportError(this.machine, 'transport used after close()');
    if (this.refused) throw this.refused;
    if (!this.conn) {
      const opening = connectWithRetry(this.config.route, this.config.connect, this.config.retry);
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
          if (e instanceof HostKeyError || e instanceof AuthError) this.refused = e;
        },
      );
    }
    return (await this.conn).client;
  }
}

/** Pauses before asking again for a channel that sshd refused (about 3 s in all). */
const CHANNEL_RETRY_DELAYS_MS = [50, 100, 200, 400, 800, 1600];

/** ssh2's messages for a connection that is already gone when a channel is requested. */
const GONE = /^(Not connected|No response from server)$/;
