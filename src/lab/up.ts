// `lab up`: plan, record state, build or reuse the root, bridge, overlays, boot in parallel, wait
// for SSH with the recorded host keys, and write the lab directory. Running it again is a no-op.
import { InputError } from '../errors.ts';
import { overlaps, parseCidr, type Network } from '../net/ipv4.ts';
import { ensureNspawnRuntime, runningPid, startMachine } from './boot.ts';
import { prepareMachine, machinePaths } from './machine.ts';
import { labMachinesOnHost, largeLabSettings } from './host-limits.ts';
import { holdHostSettings, KUBELET_HOST_SETTINGS } from './host-settings.ts';
import { DEFAULT_LAB, labDir, machineDir, type LabPaths } from './names.ts';
import { ensureBridge, checkSubnetFree, hostRoutes } from './network.ts';
import { checkDirIsLabs, ensureLabKey, writeLabFiles } from './outputs.ts';
import { planLab } from './plan.ts';
import { addRegistryHost, pushImages, registryDeb, stageRegistry, waitForRegistry } from './registry.ts';
import { runRegistryStep } from './registry-run.ts';
import { checkLabHost } from './preconditions.ts';
import { runSteps, type ProgressOptions } from './progress.ts';
import { ensureRootfs } from './rootfs.ts';
import { waitForSsh } from './ssh-wait.ts';
import { LAB_PROBE, labConnector } from './connect.ts';
import { listLabs, readState, writeState } from './state.ts';
import type { LabPlan, LabSpec, LabState } from './types.ts';

/** How long one machine may take from nspawn start to an SSH answer, in a lab of a few machines. */
export const BOOT_TIMEOUT_MS = 180_000;

/**
 * The boot timeout for a lab of `machines`: they all boot at once on the host's cores, so the
 * last one answers later the more there are (101 machines took 108 s on an idle 2-core host; 33
 * took 200 s on one at load 15 from other work: 8 s each leaves room for that).
 */
export function bootTimeoutMs(machines: number): number {
  return Math.max(BOOT_TIMEOUT_MS, 8_000 * machines);
}

/** What `up` did: started the lab, or found it already running. */
export interface UpResult {
  state: LabState;
  alreadyRunning: boolean;
  /** Host-wide settings changed for the lab, one line each (said aloud by the command). */
  hostChanges: string[];
  /** With a registry: what happened to it and to each image pushed into it, one line each (with dryRun: the plan of its step). */
  registry: string[];
}

/** `lab up --dry-run`: a lab that runs, with what lab up would change on its registry machine, changing nothing. */
export interface DryRunResult {
  state: LabState;
  /** The lab-registry step's plan on the registry machine, with diffs (none without a registry). */
  plan: string[];
  /** Changes the step would make. */
  changes: number;
}

/** Brings a lab up (or reports the running one). */
export async function labUp(spec: LabSpec, paths: LabPaths, progress: ProgressOptions): Promise<UpResult> {
  const plan = planLab(spec);
  await checkLabHost();
  const existing = readState(paths, spec.name);
  if (existing) {
    checkSameLab(existing, spec);
    const running = existing.plan.machines.every((m) => runningPid(machineDir(paths, spec.name, m.hostname), m) !== undefined);
    if (running && existing.rootfs) {
      const hostChanges = await holdLabHostSettings(paths, spec.name);
      return { state: existing, alreadyRunning: true, hostChanges, registry: await readyRegistry(existing, paths, progress) };
    }
  }
  const state: LabState = existing ?? { version: 1, plan, createdAt: new Date().toISOString() };
  checkDirIsLabs(state.plan.spec.dir);
  checkOtherLabs(paths, plan);
  checkSubnetFree((parseCidr(spec.subnet) as { ok: true; net: Network }).net, plan.bridge, await hostRoutes());
  writeState(paths, state); // before anything is created: `down` can always undo what follows
  const hostChanges = await holdLabHostSettings(paths, spec.name); // before any machine boots into a limit
  await bringUp(state, paths, progress);
  return { state, alreadyRunning: false, hostChanges, registry: await readyRegistry(state, paths, progress) };
}

/**
 * What `lab up` would change on a running lab, changing nothing: the plan of the lab-registry step
 * on its registry machine (read over SSH; the images it would push are not planned). A lab that
 * does not run yet is refused: booting it is not planned here.
 */
export async function labUpDryRun(spec: LabSpec, paths: LabPaths): Promise<DryRunResult> {
  await checkLabHost();
  const existing = readState(paths, spec.name);
  const running = existing?.rootfs !== undefined && existing.plan.machines.every((m) => runningPid(machineDir(paths, spec.name, m.hostname), m) !== undefined);
  if (!existing || !running) {
    throw new InputError(`lab "${spec.name}" is not running: lab up --dry-run plans the steps lab up runs on a running lab's machines (its registry machine's lab-registry)`,
      `bring it up first: hardway lab up${spec.name === DEFAULT_LAB ? '' : ` --name ${spec.name}`}`);
  }
  checkSameLab(existing, spec);
  const registry = existing.plan.machines.find((m) => m.role === 'registry');
  if (!registry) return { state: existing, plan: [], changes: 0 };
  const run = await runRegistryStep(existing.plan.spec.dir, registry, { dryRun: true });
  return { state: existing, plan: run.lines, changes: run.changes };
}

/** Refuses a spec that differs from the lab recorded under its name. */
function checkSameLab(existing: LabState, spec: LabSpec): void {
  const had = existing.plan.spec;
  if (had.servers !== spec.servers || had.workers !== spec.workers || had.subnet !== spec.subnet || !!had.registry !== !!spec.registry || had.loginUser !== spec.loginUser) {
    throw new InputError(
      `lab "${spec.name}" already exists with ${had.servers} server(s), ${had.workers} worker(s) on ${had.subnet}${had.registry ? ' and a registry' : ''}` +
        `, logged in as ${had.loginUser ?? 'root'}`,
      `use it as it is, or run "hardway lab down --name ${spec.name} --yes" first`);
  }
}

/** The kubelet's settings and the limits for every lab machine on this host, held for this lab. */
function holdLabHostSettings(paths: LabPaths, lab: string): Promise<string[]> {
  return holdHostSettings(labDir(paths, lab), [...KUBELET_HOST_SETTINGS, ...largeLabSettings(labMachinesOnHost(paths))]);
}

function checkOtherLabs(paths: LabPaths, plan: LabPlan): void {
  const mine = (parseCidr(plan.spec.subnet) as { ok: true; net: Network }).net;
  for (const other of listLabs(paths)) {
    const s = other === plan.spec.name ? undefined : readState(paths, other);
    if (!s) continue;
    const theirs = (parseCidr(s.plan.spec.subnet) as { ok: true; net: Network }).net;
    if (overlaps(mine, theirs)) {
      throw new InputError(`--subnet ${plan.spec.subnet} overlaps ${s.plan.spec.subnet} of lab "${other}"`,
        'give each lab its own subnet, e.g. --subnet 10.240.50.0/24');
    }
  }
}

async function bringUp(state: LabState, paths: LabPaths, progress: ProgressOptions): Promise<void> {
  const { plan } = state;
  const { spec } = plan;
  const hostKeys: Record<string, string> = {};
  const registry = plan.machines.find((m) => m.role === 'registry');
  let registryPackage: string | undefined;
  await runSteps([
    ...(registry ? [{
      title: 'docker-registry package for the registry machine (apt-get download on this host, verified)',
      run: async (update: (line: string) => void) => {
        registryPackage = await registryDeb(paths.cacheRoot, update);
      },
    }] : []),
    {
      title: 'Root filesystem (Debian 12, built once, then cached)',
      run: async (update) => {
        state.rootfs = await ensureRootfs(paths.cacheRoot, update);
        writeState(paths, state);
      },
    },
    {
      title: `Bridge ${plan.bridge} (${plan.bridgeAddress}), overlays and identities of ${plan.machines.length} machine(s)`,
      run: async () => {
        await ensureBridge(plan.bridge, plan.bridgeAddress);
        await ensureNspawnRuntime();
        const authorizedKey = await ensureLabKey(spec.dir, spec.name);
        await Promise.all(plan.machines.map(async (m) => {
          const mdir = machineDir(paths, spec.name, m.hostname);
          hostKeys[m.hostname] = await prepareMachine({
            mdir, lab: spec.name, machine: m,
            prefix: plan.prefix, rootfs: state.rootfs!, authorizedKey,
            ...(spec.loginUser !== undefined ? { loginUser: spec.loginUser } : {}),
          });
          const root = machinePaths(mdir).root;
          if (m.role === 'registry') stageRegistry(root, registryPackage!);
          else if (registry) addRegistryHost(root, registry);
        }));
        writeLabFiles(plan, spec.dir, hostKeys);
      },
    },
  ], { ...progress, concurrent: false });
  await bootMachines(state, paths, progress, plan.machines.map((m) => m.hostname));
}

/**
 * With a registry machine: docker-registry installed and active in it, answering from the host,
 * and the images of the lab directory's images/ pushed into it. Returns what it did, one line each.
 */
async function readyRegistry(state: LabState, paths: LabPaths, progress: ProgressOptions): Promise<string[]> {
  const registry = state.plan.machines.find((m) => m.role === 'registry');
  if (!registry) return [];
  const lines: string[] = [];
  await runSteps([{
    title: `Registry ${registry.hostname} (${registry.ip}:5000): docker-registry, then the images of images/ (skopeo)`,
    run: async (update) => {
      // The lab-registry step: planned, applied, planned again (a rerun changes nothing), logged.
      const run = await runRegistryStep(state.plan.spec.dir, registry, { dryRun: false, update });
      const how = run.changes > 0 ? 'installed' : 'already installed';
      await waitForRegistry(registry.ip);
      lines.push(`registry ${registry.hostname} (${registry.ip}): docker-registry ${how}, answering on :5000`);
      const pushed = await pushImages(state.plan.spec.dir, registry.ip, paths.cacheRoot, update);
      lines.push(...pushed.lines);
      // What the registry holds, for doctor's test pulls: images/ may hold more later (build-images).
      state.registryImages = pushed.images;
      writeState(paths, state);
    },
  }], { ...progress, concurrent: false });
  return lines;
}

/** Boots the named machines of a lab in parallel (those not running) and waits for their SSH. */
export async function bootMachines(state: LabState, paths: LabPaths, progress: ProgressOptions, hostnames: string[]): Promise<void> {
  const { plan } = state;
  // Made here, once the lab's files (cluster.yaml, known_hosts, ssh_config) are written.
  const connect = labConnector(plan.spec.dir, LAB_PROBE);
  await runSteps(plan.machines.filter((m) => hostnames.includes(m.hostname)).map((m) => ({
    title: `Boot ${m.hostname} (${m.ip})`,
    run: async (update) => {
      const mdir = machineDir(paths, plan.spec.name, m.hostname);
      const pid = runningPid(mdir, m) ?? startMachine(mdir, m, plan.bridge);
      update(`systemd-nspawn pid ${pid}; waiting for sshd with the recorded host key`);
      await waitForSsh({
        machine: m, connect, timeoutMs: bootTimeoutMs(plan.machines.length),
        nspawnPid: () => runningPid(mdir, m),
        root: machinePaths(mdir).root,
        consoleLog: machinePaths(mdir).console,
      });
    },
  })), { ...progress, concurrent: true });
}
