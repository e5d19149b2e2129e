// A transport wrapper that writes every command, its full output and every upload to the run log
// (redacted; upload contents are never logged), and echoes commands with -v.
import { DEFAULT_OWNER, runsAs, type ExecOptions, type ExecResult, type Transport, type UploadOptions, type UploadSource } from '../transport/types.ts';
import type { Command } from '../shell.ts';
import type { RunLog } from '../ui/run-log.ts';
import { formatMode } from './facts.ts';

/** Where the wrapper reports: the run log, and (with -v) a debug line for the user. */
export interface TransportLogSinks {
  log: RunLog;
  debug?: (host: string, line: string) => void;
}

const STDIN_LOG_LIMIT = 4096;

/** Wraps a transport so that everything it does lands in the run log under the host's name. */
export function loggedTransport(inner: Transport, sinks: TransportLogSinks, host = inner.machine): Transport {
  const { log, debug } = sinks;
  return {
    machine: inner.machine,
    async exec(cmd: Command, opts?: ExecOptions): Promise<ExecResult> {
      if (opts?.logAs !== undefined) return quietExec(cmd, opts, opts.logAs);
      const started = Date.now();
      // As it runs on the machine: with sudo -n where the login is raised.
      const shown = runsAs(inner, cmd);
      log.write(`$ ${shown}${describeStdin(opts?.stdin)}`, host);
      debug?.(host, `$ ${shown}`);
      try {
        const r = await inner.exec(cmd, opts);
        log.write(`exit ${r.code} after ${Date.now() - started} ms` + block('stdout', r.stdout) + block('stderr', r.stderr), host);
        return r;
      } catch (e) {
        log.write(`transport error after ${Date.now() - started} ms: ${(e as Error).message}`, host);
        throw e;
      }
    },
    async upload(path: string, source: UploadSource, opts: UploadOptions): Promise<void> {
      const what = 'data' in source ? `${source.data.length} bytes` : `local file ${source.file}`;
      log.write(`upload ${path} mode ${formatMode(opts.mode)} owner ${opts.owner ?? DEFAULT_OWNER} (${what})`, host);
      debug?.(host, `upload ${path}`);
      const started = Date.now();
      try {
        await inner.upload(path, source, opts);
        log.write(`uploaded ${path} in ${Date.now() - started} ms`, host);
      } catch (e) {
        log.write(`upload of ${path} failed: ${(e as Error).message}`, host);
        throw e;
      }
    },
    close: () => inner.close(),
    ...(inner.describe ? { describe: (cmd: Command) => inner.describe!(cmd) } : {}),
  };

  async function quietExec(cmd: Command, opts: ExecOptions, label: string): Promise<ExecResult> {
    const started = Date.now();
    try {
      const r = await inner.exec(cmd, opts);
      log.write(`${label}: exit ${r.code} after ${Date.now() - started} ms${r.code !== 0 ? block('stderr', r.stderr) : ''}`, host);
      return r;
    } catch (e) {
      log.write(`${label}: transport error after ${Date.now() - started} ms: ${(e as Error).message}`, host);
      throw e;
    }
  }
}

function describeStdin(stdin: string | Buffer | undefined): string {
  if (stdin === undefined) return '';
  const buf = Buffer.isBuffer(stdin) ? stdin : Buffer.from(stdin);
  if (buf.length > STDIN_LOG_LIMIT || buf.includes(0)) return `\n(stdin: ${buf.length} bytes)`;
  return block('stdin', buf.toString('utf8'));
}

function block(name: string, text: string): string {
  return text === '' ? '' : `\n--- ${name}:\n${text.replace(/\n$/, '')}`;
}
