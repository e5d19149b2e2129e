// The transport package's public face: what the engine and the commands import.
export type { ExecOptions, ExecResult, Transport, UploadOptions, UploadSource } from './types.ts';
export { openTransport, createTransport, knownHostsPath, type TransportOptions } from './open.ts';
export { hostConnector, ONE_ATTEMPT, type Connect, type HostToReach } from './connector.ts';
export { SshTransport } from './ssh.ts';
export { LocalTransport, local, runCommand, runLocal, tryLocal, type LocalTransportOptions } from './local.ts';
export { KnownHosts, fingerprint } from './known-hosts.ts';
export {
  TransportError,
  HostKeyError,
  AuthError,
  ConnectError,
  ConnectionLostError,
  CommandTimeoutError,
  type HostKeyProblem,
} from './errors.ts';
