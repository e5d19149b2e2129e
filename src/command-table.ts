// The commands that work on the machines: each one's steps (with the lanes that run side by side),
// whether it first makes pki/, what it destroys, what scopes it; how a step sequence becomes the
// engine's order; and the command line that runs given steps (doctor's fixes and the break
// scenarios' are derived from it, never typed by hand). Data below the CLI: the one command table
// (src/commands/index.ts) lists these among the others.
import type { Inventory } from './inventory.ts';
import type { StepName } from './steps/index.ts';

/** Lanes of steps run side by side (each lane in its order), on disjoint machines. */
export interface Lanes {
  lanes: ReadonlyArray<readonly StepName[]>;
}

/** A remote command's steps in order; an entry with lanes runs them side by side. */
export type StepSequence = ReadonlyArray<StepName | Lanes>;

/** A command that works on the machines: its steps, run by the engine. */
export interface RemoteCommandEntry {
  name: string;
  summary: string;
  steps: StepSequence;
  /** Makes pki/ (certs, kubeconfigs, encryption config) on the jumpbox first; not with --dry-run. */
  preparesPki?: boolean;
  /** What the command destroys: it then runs only with --yes (or shows its plan with --dry-run). */
  confirm?: string;
  /** The positional arguments a scope takes, for the usage line (e.g. NAME). */
  args?: string;
  /** More to say in --help than the steps and the exit codes. */
  details?: string;
  /** The machines the run is about, from its positional arguments (instead of --node): loaded when the command runs. */
  scope?: () => Promise<RunScope>;
}

/**
 * What a scoped run works on, from its positionals: the inventory as the steps see it (with the
 * machines that leave the cluster in `leaving`), and a line saying what was chosen.
 */
export type RunScope = (inv: Inventory, positionals: string[]) => { inventory: Inventory; note: string };


/** The worker's steps, one per component, so each reruns alone (`--only kubelet`); api-proxy (several control planes) before the kubelet dials it. */
const WORKER_STEPS: StepName[] = ['worker-os', 'containerd', 'cni', 'api-proxy', 'kubelet', 'kube-proxy'];

/** The worker lane of up: the images go in once containerd runs and before the kubelet, which needs the sandbox image. */
const UP_WORKER_LANE: StepName[] = ['worker-os', 'containerd', 'images', 'cni', 'api-proxy', 'kubelet', 'kube-proxy'];

/** Every command that works on the machines, in the order the table shows them. */
export const REMOTE_COMMANDS: readonly RemoteCommandEntry[] = [
  { name: 'pin-hosts', summary: "Pin every machine name in /etc/hosts and cloud-init's hosts template", steps: ['pin-hosts'] },
  { name: 'distribute', summary: 'Give every machine exactly its own certificates, keys and kubeconfigs', steps: ['distribute'] },
  { name: 'bootstrap-etcd', summary: 'Run etcd over TLS on the control-plane machines', steps: ['bootstrap-etcd'] },
  { name: 'bootstrap-control-plane', summary: 'Run the API server, controller manager and scheduler', steps: ['bootstrap-control-plane', 'kubelet-rbac'] },
  { name: 'bootstrap-workers', summary: 'Set up containerd, CNI, the API proxy (several control planes), kubelet and kube-proxy on the workers', steps: WORKER_STEPS },
  { name: 'images', summary: "Load the image archives of images/ into containerd on every worker (no registry needed)", steps: ['images'] },
  { name: 'routes', summary: "Route every worker's pod subnet via that worker, persisted", steps: ['routes'] },
  { name: 'dns', summary: 'Run the cluster DNS add-on: CoreDNS and the kube-dns Service every pod asks (dns in cluster.yaml)', steps: ['dns'] },
  { name: 'verify', summary: 'Read-only checks of the whole cluster', steps: ['verify'] },
  { name: 'smoke', summary: 'Smoke-test a finished cluster: encrypted secrets, a pod, logs, exec, port-forward, NodePort', steps: ['smoke'] },
  { name: 'reset', summary: 'Remove everything hardway installed on the machines (etcd data only with --delete-data etcd)', steps: ['reset'],
    confirm: 'removes every service, file, certificate and route hardway installed on the chosen machines' },
  { name: 'remove-node', summary: 'Take a worker out: drain it, delete its Node, reset it, drop its names and routes everywhere', args: 'NAME',
    steps: ['drain-node', 'reset', 'pin-hosts', 'routes'], confirm: 'drains the machine and removes everything hardway installed on it',
    details: 'NAME is a worker of machines.txt, or one whose line is already gone: then its address and names come from the certificate hardway ' +
      'issued for it, pki/machines/NAME/kubelet.crt (kept as the record). drain-node (on the first control-plane machine) cordons and drains ' +
      'NAME and deletes its Node, reset clears NAME, then pin-hosts and routes run on every other machine as if NAME were not in machines.txt. ' +
      'A machine that is gone for good cannot be reset: --keep-going still updates the others. Then remove its line from machines.txt.',
    scope: async () => (await import('./removal.ts')).removalScope },
  { name: 'up', summary: 'Everything, in order: pin-hosts, distribute, etcd, control plane, workers (images after containerd), routes, cluster DNS, verify', preparesPki: true,
    // Control plane and workers are disjoint machines: their two lanes run side by side.
    steps: ['pin-hosts', 'distribute', { lanes: [['bootstrap-etcd', 'bootstrap-control-plane', 'kubelet-rbac'], UP_WORKER_LANE] }, 'routes', 'dns', 'verify'] },
];

/** The remote command of this name. */
export function remoteEntry(name: string): RemoteCommandEntry {
  const entry = REMOTE_COMMANDS.find((c) => c.name === name);
  if (!entry) throw new Error(`no remote command "${name}"`);
  return entry;
}

/** Every step of a sequence, in the order the table names them. */
export function stepNames(steps: StepSequence): StepName[] {
  return steps.flatMap((s) => (typeof s === 'string' ? [s] : s.lanes.flat()));
}

/**
 * The chosen steps of a sequence (in table order) and the engine's order over them: segments run
 * one after another, the lanes of a segment side by side, each a list of indexes into `names`.
 */
export function stepOrder(steps: StepSequence, chosen: ReadonlySet<StepName>): { names: StepName[]; lanes: number[][][] } {
  const names: StepName[] = [];
  const lanes: number[][][] = [];
  const lane = (group: readonly StepName[]) => group.filter((n) => chosen.has(n)).map((n) => names.push(n) - 1);
  for (const s of steps) {
    const segment = (typeof s === 'string' ? [[s]] : s.lanes).map(lane).filter((l) => l.length > 0);
    if (segment.length > 0) lanes.push(segment);
  }
  return { names, lanes };
}

/**
 * The command line that runs `steps` (on `node`, when given), as a user types it: the smallest
 * command of the table that has them all (never one that destroys or is scoped by its arguments),
 * with `--only` for each step unless the command runs exactly those, or is named after the one
 * step asked (its follow-ups go with it). Doctor's fixes and the break scenarios' come from here.
 */
export function commandFor(steps: readonly StepName[], opts: { node?: string; extra?: string } = {}): string {
  const fits = REMOTE_COMMANDS.filter((c) => !c.scope && !c.confirm && steps.every((s) => stepNames(c.steps).includes(s)));
  const best = [...fits].sort((a, b) => stepNames(a.steps).length - stepNames(b.steps).length)[0];
  if (!best) throw new Error(`no command runs ${steps.join(', ')}`);
  const whole = stepNames(best.steps).length === steps.length || (steps.length === 1 && best.name === steps[0]);
  return commandLine(best.name, { ...opts, only: whole ? [] : steps });
}

/** `hardway NAME [--only STEP...] [--node NODE]` for a remote command of the table (refused when there is none of that name). */
export function commandLine(name: string, opts: { node?: string; only?: readonly string[]; extra?: string } = {}): string {
  remoteEntry(name);
  return ['hardway', name, ...(opts.only ?? []).flatMap((s) => ['--only', s]), ...(opts.node ? ['--node', opts.node] : [])].join(' ') + (opts.extra ?? '');
}
