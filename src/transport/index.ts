// The transport package's public face: what the engine and the commands import.
export type { ExecOptions, ExecResult, Transport, UploadOptions, UploadSource } from './types.ts';
export { connectAll, openTransport, createTransport, knownHostsPath, type TransportOptions, type TransportPool } from './pool.ts';
export { SshTransport } from './ssh.ts';
export { LocalTransport, type LocalTransportOptions } from './local.ts';
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
