// Shared setup for engine and pin-hosts unit tests: an inventory, fake machines, and ways to run
// the engine or a whole remote command against them, capturing what a user would see.
import { PassThrough } from 'node:stream';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { parseInventory, type Inventory } from '../../src/inventory.ts';
import { defaultSettings } from '../../src/cluster-settings.ts';
import { isExpectedError } from '../../src/errors.ts';
import { reportFailure } from '../../src/cli.ts';
import { connectionPool, type TransportFactory } from '../../src/engine/connections.ts';
import { memoryRunLog } from '../../src/ui/run-log.ts';
import { runSteps } from '../../src/engine/run.ts';
import type { RunResult, Step, StepOptions } from '../../src/engine/types.ts';
import { createLogger } from '../../src/ui/logger.ts';
import { Redactor } from '../../src/ui/redact.ts';
import { plainReporter } from '../../src/ui/reporter.ts';
import { palette } from '../../src/ui/terminal.ts';
import { remoteCommand, type RemoteDeps } from '../../src/commands/remote.ts';
import { remoteEntry } from '../../src/commands/index.ts';
import { FakeTransport, type FakeMachineSetup } from '../fixtures/fake-transport.ts';

/** The KTHW example cluster. */
export const MACHINES = `10.240.0.10 server.kubernetes.local server
10.240.0.20 node-0.kubernetes.local node-0 10.200.0.0/24
10.240.0.21 node-1.kubernetes.local node-1 10.200.1.0/24
`;

/** An inventory parsed from text, rooted in a fresh temp dir. */
export function inventoryOf(text = MACHINES, dir = mkdtempSync(join(tmpdir(), 'hw-engine-'))): Inventory {
  return parseInventory(text, defaultSettings(), { file: join(dir, 'machines.txt'), dir, clusterFile: join(dir, 'cluster.yaml') });
}

/** One fake machine per inventory machine, each set up by `setup(hostname)`. */
export function fakeCluster(inv: Inventory, setup: (hostname: string) => FakeMachineSetup = () => ({})): Map<string, FakeTransport> {
  return new Map(inv.machines.map((m) => [m.hostname, new FakeTransport(m.hostname, setup(m.hostname))]));
}

/** Default options with overrides. */
export function stepOptions(o: Partial<StepOptions> = {}): StepOptions {
  return { dryRun: false, verbose: false, keepGoing: false, concurrency: 10, values: {}, ...o };
}

/** Runs steps through the engine on fakes; returns the result, what the user saw, and the log lines. */
export async function runEngine(steps: Step[], inv: Inventory, fakes: Map<string, FakeTransport>, o: Partial<StepOptions> & { jumpbox?: FakeTransport; only?: string[]; lanes?: number[][][] } = {}) {
  const redactor = new Redactor();
  const runLog = memoryRunLog(redactor);
  const out = capture();
  const options = stepOptions(o);
  const logger = createLogger({ stream: out.stream, verbose: options.verbose, colors: palette(false), redactor, runLog });
  const pool = connectionPool(fakeFactory(fakes, o.jumpbox));
  const selected = o.only ? inv.machines.filter((m) => o.only!.includes(m.hostname)) : inv.machines;
  const result: RunResult = await runSteps({ steps, lanes: o.lanes, inventory: inv, selected, options }, { pool, logger, runLog, redactor, reporter: plainReporter(logger, options.dryRun) });
  await pool.closeAll();
  return { result, output: out.text(), log: runLog.lines.join('\n') };
}

/** The transport factory over fake machines (and a fake jumpbox); a machine with execError cannot be reached. */
export function fakeFactory(fakes: Map<string, FakeTransport>, jumpbox?: FakeTransport): TransportFactory {
  return async (host) => {
    const t = host.machine ? fakes.get(host.machine.hostname) : jumpbox;
    if (!t) throw new Error(`no fake transport for ${host.name}`);
    const unreachable = t.execError;
    if (unreachable) throw unreachable;
    return t;
  };
}

/** A writable that remembers what was written. */
export function capture() {
  const stream = new PassThrough();
  const chunks: Buffer[] = [];
  stream.on('data', (c: Buffer) => chunks.push(c));
  return { stream, text: () => Buffer.concat(chunks).toString('utf8') };
}

/** A project directory with machines.txt, as `hardway` would be run in. */
export function projectDir(text = MACHINES): string {
  const dir = mkdtempSync(join(tmpdir(), 'hw-project-'));
  writeFileSync(join(dir, 'machines.txt'), text);
  return dir;
}

/** Runs `hardway <command> ...argv` in `dir` with fake machines, the way src/cli.ts would. */
export async function runCommand(command: string, argv: string[], dir: string, fakes: Map<string, FakeTransport>, jumpbox?: FakeTransport, steps?: RemoteDeps['steps']) {
  const stdout = capture();
  const stderr = capture();
  let code: number;
  const cmd = remoteCommand(remoteEntry(command), {
    steps,
    connectors: () => async () => fakeFactory(fakes, jumpbox),
  });
  try {
    const parsed = parseArgs({ args: argv, options: cmd.options, allowPositionals: false, strict: true });
    code = await cmd.run({ values: parsed.values as never, positionals: [], stdout: stdout.stream, stderr: stderr.stream, cwd: dir, env: {} });
  } catch (e) {
    if (!isExpectedError(e)) throw e;
    code = reportFailure(e, { stdout: stdout.stream, stderr: stderr.stream, errorWidth: 100_000 }, argv.includes('--json') ? cmd : undefined);
  }
  return { code, stdout: stdout.text(), stderr: stderr.text() };
}
