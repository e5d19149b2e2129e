/**
 * The shared cluster of an end-to-end run: one 1-server lab (workers node-0 and node-1 in
 * machines.txt, node-2 booted but left out as a spare, and the registry machine), made as cloud
 * images come (`--login-user debian`: hardway logs in as debian and raises every command with
 * sudo; root's SSH is refused), that the cluster
 * suites take turns on instead of each booting its own. The first suite that asks boots it and
 * prepares its project (`download --source debian`, `build-images`); the next ones find it up and
 * use it as the one before left it; the e2e project's global teardown (helpers/global-setup.ts)
 * takes it down at the end of the run, and at the start of the next one if a run was killed.
 *
 * API
 *   useSharedCluster({ fresh? }) -> () => Lab
 *       Registers a beforeAll that boots the shared lab if this run has not yet (or attaches to it).
 *       fresh: the suite needs machines on which hardway has never run; if a suite of this run
 *       used the lab already, `hardway reset --yes --delete-data etcd` puts them back first (the
 *       day-two suite, which runs first, proves that reset leaves a machine as before its first up).
 *       The suite's own beforeAll runs `up` when it needs a converged cluster: a no-op when the
 *       suite before left it converged. Suites restore what they break (docs/testing-and-benchmarks.md).
 *   SHARED_LAB                 its name, subnet and spare worker
 *   machinesWithSpare(lab)     machines.txt's text with the spare worker's line (for day-two's node-2)
 *   sparedMachines(lab)        the machines of that text: the Lab's machines and the spare
 *   markFresh()                the machines are as before the first up again (proved by the caller)
 *   claimShared(runId)         at a run's start: down a lab a killed run left; refuse one a live run uses
 *   releaseShared(runId)       at a run's end: down the lab if this run made it
 *   downShared()               takes the shared lab down
 */
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, inject } from 'vitest';
import { prepareClusterProject } from './cluster.ts';
import { downLab, labAt, readMachines, startLab, type Lab, type LabMachineInfo } from './lab.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** One id per `vitest run`: a shared lab made by another run is not reused. */
    e2eRunId: string;
  }
}

const NAME = process.env.HARDWAY_E2E_SHARED_NAME ?? 'e2e-shared';
/** Machines as cloud images come: hardway logs in as this user and raises every command with sudo (issue 33). */
const LOGIN = process.env.HARDWAY_E2E_SHARED_LOGIN ?? 'debian';
const SUBNET = process.env.HARDWAY_E2E_SHARED_SUBNET ?? '10.240.50.0/24';

/**
 * The shared lab: its name, subnet (HARDWAY_E2E_SHARED_NAME and _SUBNET give another, so that two
 * checkouts on one host do not take each other's down), project directory, the worker left out of
 * machines.txt, and an address in its subnet that no machine has (for "must not answer").
 */
export const SHARED_LAB = {
  name: NAME,
  subnet: SUBNET,
  dir: join(tmpdir(), `hardway-${NAME}`),
  spare: 'node-2',
  loginUser: LOGIN,
  unused: SUBNET.replace(/\.0\/24$/, '.250'),
} as const;

const STATE = join(SHARED_LAB.dir, '.e2e-shared.json');
const WITH_SPARE = join(SHARED_LAB.dir, '.machines-with-spare.txt');

/** What the run that made the lab wrote: whose it is and whether a suite used it yet. */
interface SharedState {
  runId: string;
  used: boolean;
}

function readState(): SharedState | undefined {
  if (!existsSync(STATE)) return undefined;
  try {
    return JSON.parse(readFileSync(STATE, 'utf8')) as SharedState;
  } catch {
    return undefined;
  }
}

/** Boots the shared lab and prepares its project; node-2 is left out of machines.txt. */
async function boot(runId: string): Promise<void> {
  const l = await startLab({ name: SHARED_LAB.name, subnet: SHARED_LAB.subnet, servers: 1, workers: 3, registry: true, dir: SHARED_LAB.dir, loginUser: SHARED_LAB.loginUser });
  const all = readFileSync(join(l.dir, 'machines.txt'), 'utf8');
  writeFileSync(WITH_SPARE, all);
  writeFileSync(join(l.dir, 'machines.txt'), all.split('\n').filter((line) => !new RegExp(`\\s${SHARED_LAB.spare}(\\s|$)`).test(line)).join('\n'));
  await prepareClusterProject(l);
  writeFileSync(STATE, JSON.stringify({ runId, used: false } satisfies SharedState));
}

/** The shared lab for this suite (see the API above). */
export function useSharedCluster(o: { fresh?: boolean } = {}): () => Lab {
  let lab: Lab | undefined;
  beforeAll(async () => {
    const runId = inject('e2eRunId');
    if (readState()?.runId !== runId) await boot(runId);
    const l = labAt(SHARED_LAB.name, SHARED_LAB.dir, SHARED_LAB.loginUser);
    // A suite that finds the lab as another left it must not take it down: the run's teardown does.
    l.down = async () => undefined;
    if (o.fresh && readState()!.used) {
      const r = await l.hardway(['reset', '--yes', '--delete-data', 'etcd']);
      if (r.code !== 0) throw new Error(`hardway reset --yes --delete-data etcd (to give this suite fresh machines) failed (exit ${r.code}):\n${r.stderr}\n${r.stdout}`);
    }
    writeFileSync(STATE, JSON.stringify({ runId, used: true } satisfies SharedState));
    lab = l;
  });
  return () => {
    if (!lab) throw new Error(`the shared lab "${SHARED_LAB.name}" is not up (its beforeAll failed; see the error there)`);
    return lab;
  };
}

/**
 * Says the shared lab's machines are as before hardway's first up again (a suite that just proved it,
 * day-two after its reset): the next suite that asks for fresh machines takes them as they are,
 * without another reset.
 */
export function markFresh(): void {
  const state = readState();
  if (state) writeFileSync(STATE, JSON.stringify({ ...state, used: false } satisfies SharedState));
}

/** machines.txt's text with the spare worker's line. */
export function machinesWithSpare(l: Lab): string {
  return readFileSync(join(l.dir, '.machines-with-spare.txt'), 'utf8');
}

/** Every machine of the shared lab, the spare worker included. */
export function sparedMachines(l: Lab): LabMachineInfo[] {
  return readMachines(join(l.dir, '.machines-with-spare.txt'));
}

/** The process of run `runId` (`PID-TIME`) is still alive. */
function alive(runId: string): boolean {
  const pid = Number(runId.split('-')[0]);
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * At the start of run `runId`: takes down a shared lab that a run which is gone left behind (killed),
 * and refuses, naming it, a shared lab that another live run is using (it is never taken from under it).
 */
export async function claimShared(runId: string): Promise<void> {
  const owner = readState()?.runId;
  if (owner && owner !== runId && alive(owner)) {
    throw new Error(`another test run (pid ${owner.split('-')[0]}) is using the shared lab "${SHARED_LAB.name}": wait for it, ` +
      'or give this run a lab of its own with HARDWAY_E2E_SHARED_NAME=NAME HARDWAY_E2E_SHARED_SUBNET=10.240.N.0/24');
  }
  if (owner || existsSync(SHARED_LAB.dir)) await downShared();
}

/** At the end of run `runId`: takes the shared lab down if this run made it (idempotent). */
export async function releaseShared(runId: string): Promise<void> {
  if (readState()?.runId === runId) await downShared();
}

/** Takes the shared lab down and removes its directory (idempotent). */
export async function downShared(): Promise<void> {
  await downLab(SHARED_LAB.name);
  rmSync(SHARED_LAB.dir, { recursive: true, force: true });
}
