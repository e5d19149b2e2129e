// The multipass commands hardway runs, through one replaceable runner. A missing `multipass` is an
// input error (exit 2) saying how to install it; a command that fails is a FailureError carrying
// Multipass's own words (its stderr).
import { sh } from '../shell.ts';
import { runCommand } from '../transport/local.ts';
import { FailureError, InputError } from '../errors.ts';
import { parseInfo, parseList } from './json.ts';
import type { Instance } from './types.ts';

/** The outcome of one multipass command. */
export interface MultipassResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `multipass ...args` (with `input` on stdin); tests pass their own. */
export type MultipassRunner = (args: string[], input?: string) => Promise<MultipassResult>;

/** How to get Multipass, for the error that says it is missing. */
export const INSTALL_HINT =
  'install Multipass: "sudo snap install multipass" on Linux, "brew install --cask multipass" on macOS (see https://canonical.com/multipass/install), then run this again';

/** The `multipass` found on env.PATH. */
export function systemMultipass(env: NodeJS.ProcessEnv): MultipassRunner {
  return async (args, input) => {
    // The shell says 127 for a command it cannot find (after the lookup on env.PATH).
    const r = await runCommand(sh`command -v multipass >/dev/null || exit 127; exec multipass ${args}`, { env, stdin: input ?? '' });
    if (r.code === 127 && r.stdout === '' && r.stderr === '') throw new InputError('multipass is not installed: there is no "multipass" command on PATH', INSTALL_HINT);
    return r;
  };
}

/** What `launch` needs for one VM. */
export interface LaunchOptions {
  name: string;
  image: string;
  cpus: number;
  memory: string;
  disk: string;
  timeoutS: number;
  /** cloud-init user-data, passed on stdin (`--cloud-init -`): the snap's confinement cannot read files in /tmp or outside $HOME. */
  userData: string;
}

/** The multipass commands hardway uses. */
export class MultipassClient {
  constructor(private readonly run: MultipassRunner) {}

  /** Every instance Multipass knows, deleted ones included. */
  async list(): Promise<Instance[]> {
    return parseList((await this.checked(['list', '--format', 'json'])).stdout);
  }

  /** Full descriptions of the named instances (each must exist). */
  async info(names: string[]): Promise<Map<string, Instance>> {
    if (names.length === 0) return new Map();
    return parseInfo((await this.checked(['info', '--format', 'json', ...names])).stdout);
  }

  /** Launches one VM; a failure carries multipass's stderr. */
  async launch(o: LaunchOptions): Promise<void> {
    const args = ['launch', o.image, '--name', o.name, '--cpus', String(o.cpus), '--memory', o.memory, '--disk', o.disk,
      '--timeout', String(o.timeoutS), '--cloud-init', '-'];
    const r = await this.run(args, o.userData);
    if (r.code !== 0) {
      throw new FailureError(`${o.name}: multipass launch failed (exit ${r.code}):\n${indent(r.stderr.trim() || r.stdout.trim() || '(it printed nothing)')}`,
        `remove what is left of it ("multipass delete --purge ${o.name}") and run hardway multipass up again`);
    }
  }

  /** Starts stopped or suspended instances. */
  async start(names: string[]): Promise<void> {
    if (names.length > 0) await this.checked(['start', ...names]);
  }

  /** Deletes and purges exactly the named instances (never `multipass purge`, which purges every deleted instance). */
  async deletePurge(names: string[]): Promise<void> {
    if (names.length > 0) await this.checked(['delete', '--purge', ...names]);
  }

  private async checked(args: string[]): Promise<MultipassResult> {
    const r = await this.run(args);
    if (r.code !== 0) {
      throw new FailureError(`multipass ${args.join(' ')} failed (exit ${r.code}):\n${indent(r.stderr.trim() || '(no message)')}`,
        /cannot connect to the multipass socket/i.test(r.stderr) ? 'the Multipass daemon is not running: start it (e.g. "sudo snap start multipass")' : undefined);
    }
    return r;
  }
}

function indent(text: string): string {
  return text.split('\n').map((l) => `  ${l}`).join('\n');
}
