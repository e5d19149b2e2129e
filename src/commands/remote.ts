// Every command that works on the machines (pin-hosts ... up): the global options, the checks of
// --only/--node/--concurrency, and the wiring of the SSH transport into the engine.
import { closest, didYouMean } from '../suggest.ts';
import { INVENTORY_OPTIONS, jsonOption, machinesFile, needsYes, SSH_OPTIONS, yesOption, type CliCommand, type CliContext, type OptionSpec } from '../cli/command.ts';
import { FailureError, InputError, PreconditionError } from '../errors.ts';
import { archiveImageNames } from '../steps/images.ts';
import { sandboxWithoutSource } from '../steps/support/sandbox-image.ts';
import { loadInventory, selectMachines, type Inventory } from '../inventory.ts';
import { ClusterApi, type ClusterApiOptions } from '../cluster-api/cluster-api.ts';
import { runSession, type Connectors } from '../engine/session.ts';
import { withRunLock } from '../lock.ts';
import { checkPkiDir } from '../certs/pki-files.ts';
import type { RunResult, StepOptions } from '../engine/types.ts';
import { STEPS, type StepEntry, type StepName } from '../steps/index.ts';
import { STEP_OPTIONS } from '../steps/options.ts';
import { kubernetesToRender } from '../steps/support/kubernetes-version.ts';
import { stepNames as namesOf, stepOrder, type RemoteCommandEntry } from '../cli/entry.ts';
import type { RunScope, ScopeName } from '../command-table.ts';
import { showPkiPlan } from './prepare-pki.ts';
import { sshOptions } from './ssh-options.ts';
import { checkIdentityFiles } from '../transport/auth.ts';
import { preflightThenPki } from './preflight.ts';

/** Options every remote command takes. */
export const REMOTE_OPTIONS: Record<string, OptionSpec> = {
  ...INVENTORY_OPTIONS,
  node: { type: 'string', multiple: true, arg: 'NAME', description: 'only this machine (its hostname in machines.txt)' },
  only: { type: 'string', multiple: true, arg: 'STEP', description: 'only this step of the command' },
  'dry-run': { type: 'boolean', description: 'show per machine what would change (diffs of text files, secrets hidden); change nothing' },
  concurrency: { type: 'string', arg: 'N', default: '10', range: [1, 1000], description: 'machines worked on at once within a step' },
  'keep-going': { type: 'boolean', description: 'after a step fails, still run later steps on the machines that did not fail' },
  json: jsonOption('{ok, changed, failed, results: [{step, machine, status, changes, error}]}; the progress goes to stderr'),
  ...SSH_OPTIONS,
};

/** A run's --json object (src/ui/summary.ts) when the run could not start: nothing changed, nothing failed. */
export const RUN_JSON_FIELDS = { changed: 0, failed: 0, results: [] };


/** What a remote command needs from outside; tests pass fake connectors. */
export interface RemoteDeps {
  connectors?: (ctx: CliContext, inv: ReturnType<typeof loadInventory>) => Connectors;
  /** The step registry (default: src/steps/index.ts). */
  steps?: Partial<Record<StepName, StepEntry>>;
  /**
   * The run's direct route to the cluster (default: ClusterApi.forRun over SSH connectors; none
   * with connectors of a test's, whose fake machines have no API server to dial).
   */
  clusterApi?: (inv: Inventory, opts: ClusterApiOptions) => ClusterApi | undefined;
  /** The caller holds the project's lock already (a command that runs another's steps inside its own run). */
  lockHeld?: boolean;
}

/** Each scope of the command table, loaded only by the command that has it. */
const SCOPES: Record<ScopeName, () => Promise<RunScope>> = {
  removal: async () => (await import('../removal.ts')).removalScope,
};

/** The CLI command `hardway <name>` that runs the steps its entry of the command table lists. */
export function remoteCommand(entry: RemoteCommandEntry, deps: RemoteDeps = {}): CliCommand {
  const { name } = entry;
  const stepNames = namesOf(entry.steps);
  const registry: Partial<Record<StepName, StepEntry>> = deps.steps ?? STEPS;
  const stepOptions: Record<string, OptionSpec> = Object.fromEntries(stepNames.flatMap((s) => registry[s]?.options ?? []).map((o) => [o, STEP_OPTIONS[o]]));
  // A scoped command's steps go together (no --only), and --node names the one machine it is about.
  const { node: _node, only: _only, ...rest } = REMOTE_OPTIONS;
  const scopedOptions = { ...rest, node: { type: 'string', arg: 'NAME', description: 'the machine to work on (it may also be given as the first argument)' } } satisfies Record<string, OptionSpec>;
  return {
    name,
    summary: entry.summary,
    ...(entry.args ? { args: entry.args } : {}),
    details: [
      ...(entry.details ? [entry.details, ''] : []),
      `Steps, in order: ${stepNames.join(', ')}.`,
      'Each step plans (reads) first and changes only what differs; a second run changes nothing.',
      '',
      'Exit codes: 0 success, 1 a step failed on some machine, 2 usage or input error. A log of every remote command and its output is written to logs/ in the project directory.',
    ].join('\n'),
    options: { ...(entry.scope ? scopedOptions : REMOTE_OPTIONS), ...(entry.confirm ? { yes: yesOption(`the command ${entry.confirm}`) } : {}), ...stepOptions },
    examples: entry.examples,
    jsonFields: RUN_JSON_FIELDS,
    run: async (ctx) => (await runRemote(entry, ctx, { ...deps, steps: registry })).code,
  };
}

/** Runs a remote command of the table as the CLI would, and returns its exit code and every result. */
export async function runRemote(entry: RemoteCommandEntry, ctx: CliContext, deps: RemoteDeps): Promise<{ code: number; result: RunResult }> {
  const { name } = entry;
  const stepNames: string[] = namesOf(entry.steps);
  const v = ctx.values;
  const concurrency = Number(v.concurrency);
  const only = (v.only as string[] | undefined) ?? [];
  for (const s of only) {
    if (!stepNames.includes(s)) {
      const near = didYouMean(closest(s, stepNames));
      throw new InputError(`unknown step "${s}" for "hardway ${name}"`, `${near ? `${near} ` : ''}its steps are: ${stepNames.join(', ')}`);
    }
  }
  const { names: chosen, lanes } = stepOrder(entry.steps, new Set(only.length ? namesOf(entry.steps).filter((s) => only.includes(s)) : namesOf(entry.steps)));
  const registry: Partial<Record<StepName, StepEntry>> = deps.steps ?? STEPS;
  const isRegistered = (s: StepName) => Object.hasOwn(registry, s);
  const missing = chosen.filter((s) => !isRegistered(s));
  if (missing.length) {
    throw new FailureError(
      `"hardway ${name}" is not implemented yet: step${missing.length > 1 ? 's' : ''} ${missing.join(', ')} not available in this version`,
      chosen.length > missing.length ? `--only ${chosen.filter(isRegistered).join(' --only ')} runs what exists` : undefined,
    );
  }
  // The command again as typed, for the messages that say how to rerun it.
  const typed = [name, ...(entry.scope && typeof v.node === 'string' ? ['--node', v.node] : []), ...ctx.positionals].join(' ');
  if (entry.confirm && v.yes !== true && v['dry-run'] !== true) {
    throw needsYes(ctx, typed, entry.confirm);
  }
  const loaded = loadInventory(machinesFile(ctx));
  const scoped = entry.scope ? (await SCOPES[entry.scope]())(loaded, [...(typeof v.node === 'string' ? [v.node] : []), ...ctx.positionals]) : undefined;
  const inventory = scoped?.inventory ?? loaded;
  const selected = scoped ? [...inventory.machines, ...(inventory.leaving ?? [])] : selectMachines(inventory, v.node as string[] | undefined);
  if (scoped) ctx.stderr.write(`${scoped.note}\n`);
  // -i before any file is written or machine asked: a missing key or a .pub is exit 2 at once.
  checkIdentityFiles(v.identity as string[] | undefined, ctx.cwd);
  // pki/ a file or a link to nothing is the project's input error (exit 2), not each machine's failure.
  checkPkiDir(inventory.dir);
  // An unsupported Kubernetes release is an input error before any machine is touched, not a
  // failure of each step that renders. (An unreadable downloads/manifest.json is left to the steps
  // that read it: pin-hosts or verify do not need it.)
  try {
    kubernetesToRender(inventory);
  } catch (e) {
    if (e instanceof InputError) throw e;
  }
  // A sandbox image no source gives: every node would turn Ready and every pod stay ContainerCreating.
  const sandbox = chosen.some((s) => s === 'images' || s === 'kubelet') ? sandboxWithoutSource(inventory, archiveImageNames(inventory.dir)) : undefined;
  if (sandbox && v['dry-run'] !== true) throw new PreconditionError(sandbox.problem, sandbox.hint);
  if (sandbox) (v.json === true ? ctx.stderr : ctx.stdout).write(`warning: ${sandbox.problem}\n  ${sandbox.hint}\n`);
  const options: StepOptions = {
    dryRun: v['dry-run'] === true,
    verbose: v.verbose === true,
    keepGoing: v['keep-going'] === true,
    concurrency,
    values: v,
  };
  const run = async () => {
    const out = v.json === true ? ctx.stderr : ctx.stdout;
    if (entry.preparesPki && !options.dryRun) {
      // A first run makes every key (seconds each): preflight.ts first makes sure the machines can be worked on at all.
      await preflightThenPki({ command: name, inventory, machines: selected, opts: sshOptions(ctx, loaded), out, concurrency, ...(deps.connectors ? { connectors: deps.connectors(ctx, loaded) } : {}) });
    }
    if (entry.preparesPki && options.dryRun) showPkiPlan(inventory, out);
    const steps = await Promise.all(chosen.map((s) => registry[s]!.load()));
    const connectors = (deps.connectors ?? sshConnectors)(ctx, loaded);
    const { code, result } = await runSession({ command: name, steps, lanes, inventory, selected, options, json: v.json === true, stdout: ctx.stdout, stderr: ctx.stderr, env: ctx.env, connectors, lockHeld: true,
      clusterApi: (opts) => (deps.clusterApi ?? (deps.connectors ? () => undefined : ClusterApi.forRun))(inventory, opts) });
    return { code, result };
  };
  // One lock for the whole run: pki/ is made and sent with no other run changing it in between.
  return deps.lockHeld ? run() : withRunLock(inventory.dir, name, run);
}

/** The one transport factory: SSH to machines (shared known_hosts), the local transport for the jumpbox. */
export function sshConnectors(ctx: CliContext, inv: ReturnType<typeof loadInventory>): Connectors {
  return async (logger, note) => {
    const t = await import('../transport/index.ts');
    return t.hostConnector(inv, { ...sshOptions(ctx, inv), log: (line: string) => logger.debug(line) }, note);
  };
}
