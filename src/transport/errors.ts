// The errors a transport raises on purpose. Each names the machine (and, for a command, the
// command) so the engine can report it as is; none carries a secret (no stdin, no file data).
import { CommandError, FailureError } from '../errors.ts';

/** Why a host key was refused: never seen (and not accepted), different from the pinned one, or revoked. */
export type HostKeyProblem = 'unknown' | 'changed' | 'revoked';

/** A connection-level failure on one machine (exit 1). */
export class TransportError extends FailureError {
  constructor(
    readonly machine: string,
    message: string,
    hint?: string,
  ) {
    super(`${machine}: ${message}`, hint);
    this.name = 'TransportError';
  }
}

/** The machine's host key is unknown, changed or revoked: nothing was done on that machine. */
export class HostKeyError extends TransportError {
  constructor(
    machine: string,
    readonly problem: HostKeyProblem,
    /** SHA256:… fingerprint of the key the machine presented. */
    readonly presented: string,
    /** SHA256:… fingerprints pinned in known_hosts for this machine (empty when unknown). */
    readonly pinned: string[],
    readonly knownHostsFile: string,
    host: string,
  ) {
    super(machine, hostKeyMessage(problem, host, presented, pinned, knownHostsFile), hostKeyHint(problem, knownHostsFile));
    this.name = 'HostKeyError';
  }
}

function hostKeyMessage(problem: HostKeyProblem, host: string, presented: string, pinned: string[], file: string): string {
  if (problem === 'unknown') return `host key of ${host} is not in ${file} (presented ${presented}); refusing to connect`;
  if (problem === 'revoked') return `host key ${presented} of ${host} is marked @revoked in ${file}; refusing to connect`;
  return (
    `HOST KEY OF ${host} HAS CHANGED: pinned ${pinned.join(', ')} in ${file}, presented ${presented}; ` +
    'refusing to connect (this can be a man-in-the-middle attack); nothing was done on this machine'
  );
}

function hostKeyHint(problem: HostKeyProblem, file: string): string {
  if (problem === 'unknown') return 'check the fingerprint on the machine (ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub), then rerun with --accept-new-host-keys to pin it';
  return `if the machine was really reinstalled, remove its old line from ${file} (ssh-keygen -R HOST -f ${file}) and rerun with --accept-new-host-keys`;
}

/** The machine refused every authentication method offered; never retried. */
export class AuthError extends TransportError {
  constructor(machine: string, target: string, readonly tried: string[], notes: string[]) {
    super(
      machine,
      `authentication failed for ${target} (tried: ${tried.length ? tried.join(', ') : 'nothing to offer'})` +
        (notes.length ? `; ${notes.join('; ')}` : ''),
      'load a key into ssh-agent, pass -i KEY, or set ssh.identityFile in cluster.yaml; the public key must be in the machine\'s authorized_keys',
    );
    this.name = 'AuthError';
  }
}

/** The machine could not be reached (refused, unreachable, timed out), after the given attempts. */
export class ConnectError extends TransportError {
  constructor(
    machine: string,
    target: string,
    readonly reason: string,
    readonly attempts: number,
  ) {
    super(
      machine,
      `cannot connect to ${target}: ${reason}` + (attempts > 1 ? ` (gave up after ${attempts} attempts)` : ''),
      'check that the machine is up, its address and port are right, and sshd is running',
    );
    this.name = 'ConnectError';
  }
}

/** The connection broke while a command or upload was in flight; the operation's outcome is unknown. */
export class ConnectionLostError extends TransportError {
  constructor(machine: string, what: string, reason: string) {
    super(machine, `connection lost during ${what}: ${reason}`, 'rerun: every step plans again from what is on the machine');
    this.name = 'ConnectionLostError';
  }
}

/** A remote command exceeded its time limit; its channel was killed. */
export class CommandTimeoutError extends CommandError {
  constructor(
    machine: string,
    command: string,
    readonly timeoutMs: number,
    stderr: string,
  ) {
    super(machine, command, null, stderr);
    this.message = `${machine}: command timed out after ${formatMs(timeoutMs)} and was killed: ${command}` +
      (stderr.trim() ? `\n${stderr.trim().split('\n').map((l) => `  ${l}`).join('\n')}` : '');
    this.name = 'CommandTimeoutError';
  }
}

function formatMs(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`;
}
