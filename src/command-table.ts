// The step table and the command table: every step hardway has, once, with what kind of step it is
// (the services it runs, the files it renders, the options it adds); then the commands that work on
// the machines: each one's steps (with the lanes that run side by side), whether it first makes
// pki/, what it destroys, what scopes it; how a step sequence becomes the engine's order; and the
// command line that runs given steps (doctor's fixes and the break scenarios' are derived from it,
// never typed by hand). Data at the bottom layer: render, the step registry (steps/index.ts, which
// loads src/steps/<name>.ts for each name here), verify, doctor and the CLI all read it. Adding a
// step is its module, its entry here (and its place in a command), and its plan test.
import type { Inventory } from './inventory.ts';
import type { CommandGroupKey, Example } from './option-spec.ts';

/**
 * Every step by name: `renders` for a step that installs rendered files, `component` for a worker
 * component with a unit of its own, `services` for the systemd services it installs and runs (in
 * start order), `options` for the options of src/steps/options.ts it adds to every command that runs it.
 */
export const STEP_NAMES = {
  preflight: { options: ['ignore-preflight'] },
  'pin-hosts': { renders: true, options: ['local'] },
  distribute: { options: ['api-timeout'] },
  'bootstrap-etcd': { renders: true, services: ['etcd'] },
  'bootstrap-control-plane': { renders: true, services: ['kube-apiserver', 'kube-controller-manager', 'kube-scheduler'] },
  'kubelet-rbac': { options: ['api-timeout'] },
  'worker-os': { renders: true },
  containerd: { renders: true, component: true, services: ['containerd'] },
  images: {},
  cni: { renders: true, component: true },
  'api-proxy': { renders: true, services: ['haproxy'] },
  kubelet: { renders: true, component: true, services: ['kubelet'] },
  'kube-proxy': { renders: true, component: true, services: ['kube-proxy'] },
  'pod-forwarding': { renders: true, services: ['hardway-pod-forwarding'] },
  routes: { renders: true, services: ['hardway-pod-routes'] },
  'etcd-snapshots': { renders: true },
  dns: { options: ['api-timeout', 'ready-timeout'] },
  verify: { options: ['ready-timeout'] },
  reset: { options: ['local', 'delete-data'] },
  'drain-node': {},
  smoke: { options: ['web-image', 'rollout-timeout'] },
} as const;

/** The name of a step. */
export type StepName = keyof typeof STEP_NAMES;

type Having<P extends string> = { [K in StepName]: (typeof STEP_NAMES)[K] extends Record<P, true> ? K : never }[StepName];

/** A step that installs rendered files: the tag of each file rendering makes. */
export type RenderStep = Having<'renders'>;

/** A worker step that installs one component's binaries, files and unit. */
export type WorkerComponentName = Having<'component'>;

type ServicesOf<K extends StepName> = (typeof STEP_NAMES)[K] extends { services: infer S extends readonly string[] } ? S : readonly [];

/** The services a step installs and runs, in start order (none for most steps). */
export function servicesOfStep<K extends StepName>(step: K): ServicesOf<K> {
  const entry = STEP_NAMES[step] as { services?: readonly string[] };
  return (entry.services ?? []) as ServicesOf<K>;
}

/** Every service hardway runs -> the step that installs and runs it (what puts it back). */
export const SERVICE_STEPS: ReadonlyMap<string, StepName> = new Map(
  (Object.keys(STEP_NAMES) as StepName[]).flatMap((step) => servicesOfStep(step).map((service): [string, StepName] => [service, step])),
);

/** The control-plane services of Kubernetes, in start order (etcd, the pod routes and the API proxy aside). */
export const CONTROL_PLANE_SERVICES = servicesOfStep('bootstrap-control-plane');

/** The worker services hardway runs, one per component with a service, in the order of the step table. */
export const WORKER_SERVICES = (Object.keys(STEP_NAMES) as StepName[])
  .filter((step) => (STEP_NAMES[step] as { component?: boolean }).component)
  .flatMap((step) => servicesOfStep(step)) as readonly WorkerService[];

/** A worker service. */
export type WorkerService = ServicesOf<'containerd'>[number] | ServicesOf<'kubelet'>[number] | ServicesOf<'kube-proxy'>[number];

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
  /** The heading of the top-level help it is listed under. */
  group: CommandGroupKey;
  steps: StepSequence;
  /** At least one, for --help. */
  examples: readonly Example[];
  /** Makes pki/ (certs, kubeconfigs, encryption config) on the jumpbox first; with --dry-run, shows what it would make. */
  preparesPki?: boolean;
  /** What the command destroys: it then runs only with --yes (or shows its plan with --dry-run). */
  confirm?: string;
  /** The positional arguments a scope takes, for the usage line (e.g. [NAME]). */
  args?: string;
  /** More to say in --help than the steps and the exit codes. */
  details?: string;
  /** The machines the run is about, from --node NAME or its arguments (its steps then go together, no --only): the scope of that name (src/commands/remote.ts loads it when the command runs). */
  scope?: ScopeName;
}

/**
 * What a scoped run works on, from the names it is given (--node NAME or its arguments): the inventory as the steps see it (with the
 * machines that leave the cluster in `leaving`), and a line saying what was chosen.
 */
export type RunScope = (inv: Inventory, names: string[]) => { inventory: Inventory; note: string };

/** The scopes a command can have: `removal`, the worker leaving the cluster (src/removal.ts). */
export type ScopeName = 'removal';


/**
 * The worker's steps, one per component, so each reruns alone (`--only kubelet`); api-proxy (several control planes) before the kubelet dials it;
 * pod-forwarding last, so its jump goes into FORWARD before the rules kube-proxy put there.
 */
const WORKER_STEPS: StepName[] = ['worker-os', 'containerd', 'cni', 'api-proxy', 'kubelet', 'kube-proxy', 'pod-forwarding'];

/** The worker lane of up: the images go in once containerd runs and before the kubelet, which needs the sandbox image. */
const UP_WORKER_LANE: StepName[] = ['worker-os', 'containerd', 'images', 'cni', 'api-proxy', 'kubelet', 'kube-proxy', 'pod-forwarding'];

/** Every command that works on the machines, in the order the table shows them. */
export const REMOTE_COMMANDS: readonly RemoteCommandEntry[] = [
  { name: 'up', group: 'cluster', summary: 'Everything in order: pki/, then each step below', preparesPki: true,
    // Control plane and workers are disjoint machines: their two lanes run side by side.
    steps: ['preflight', 'pin-hosts', 'distribute', { lanes: [['bootstrap-etcd', 'bootstrap-control-plane', 'kubelet-rbac', 'etcd-snapshots'], UP_WORKER_LANE] }, 'routes', 'dns', 'verify'],
    examples: [
      ['hardway up --dry-run', 'show what would change in pki/ and on each machine, changing nothing'],
      ['hardway up --accept-new-host-keys', "the first run: pin each machine's host key in known_hosts"],
      ['hardway up --dir lab-demo --keep-going', 'the project in lab-demo/; after a failure, go on with the machines that did not fail'],
      ['hardway up --only routes --node node-1', 'one step on one machine'],
    ] },
  { name: 'pin-hosts', group: 'cluster', summary: "Pin every machine's name in each /etc/hosts", steps: ['pin-hosts'],
    examples: [
      ['hardway pin-hosts --dry-run', 'show the lines of /etc/hosts that would change on each machine, changing nothing'],
      ['hardway pin-hosts --node node-1', 'pin the names on node-1 only'],
      ['hardway pin-hosts --local', "also pin them in this machine's own /etc/hosts (the jumpbox)"],
    ] },
  { name: 'distribute', group: 'cluster', summary: 'Give every machine its own certificates and keys', steps: ['distribute'],
    examples: [
      ['hardway distribute --dry-run', 'list the files of pki/ each machine would get, and the services that would restart'],
      ['hardway distribute --node node-0', 'only node-0 (after "hardway certs --renew node-0")'],
    ] },
  { name: 'bootstrap-etcd', group: 'cluster', summary: 'Run etcd over TLS on the control-plane machines', steps: ['bootstrap-etcd'],
    examples: [['hardway bootstrap-etcd', 'install, configure and start etcd on every control-plane machine']] },
  { name: 'bootstrap-control-plane', group: 'cluster', summary: 'Run the API server, controller manager, scheduler', steps: ['bootstrap-control-plane', 'kubelet-rbac'],
    examples: [['hardway bootstrap-control-plane --api-timeout 300', 'the same, waiting up to 5 minutes for a slow API server']] },
  { name: 'bootstrap-workers', group: 'cluster', summary: 'Run containerd, CNI, kubelet, kube-proxy on workers', steps: WORKER_STEPS,
    examples: [
      ['hardway bootstrap-workers', 'every component on every worker'],
      ['hardway bootstrap-workers --only containerd --node node-1', 'one component on one worker'],
    ] },
  { name: 'images', group: 'cluster', summary: 'Load images/ into containerd on every worker', steps: ['images'],
    examples: [['hardway images', 'load images/*.tar (from "hardway build-images") on every worker; no registry needed']] },
  { name: 'routes', group: 'cluster', summary: "Route every worker's pod subnet via that worker", steps: ['routes'],
    examples: [['hardway routes --node node-1', 'put back the pod routes of node-1']] },
  { name: 'dns', group: 'cluster', summary: 'Run the cluster DNS (CoreDNS, the kube-dns Service)', steps: ['dns'],
    examples: [
      ['hardway dns --ready-timeout 120', 'install CoreDNS and wait up to 2 minutes for it'],
      ['hardway dns --dry-run', 'show the objects that would change (set dns.enabled: false in cluster.yaml to remove it)'],
    ] },
  { name: 'verify', group: 'cluster', summary: 'Check the whole cluster, changing nothing', steps: ['verify'],
    examples: [['hardway verify --ready-timeout 0', 'check once, without waiting for the nodes to become Ready']] },
  { name: 'smoke', group: 'cluster', summary: 'Smoke-test the cluster: a pod, logs, exec, a Service', steps: ['smoke'],
    examples: [
      ['hardway smoke', 'run the smoke test with nginx:stable (the workers must be able to pull it)'],
      ['hardway smoke --web-image localhost/hardway/web:1', 'with the offline web image of "hardway build-images"'],
    ] },
  { name: 'remove-node', group: 'day-two', summary: 'Take a worker out: drain, delete its Node, reset it', args: '[NAME]',
    steps: ['drain-node', 'reset', 'pin-hosts', 'routes'], confirm: 'drains the machine and removes everything hardway installed on it',
    details: 'NAME is a worker of machines.txt, or one whose line is already gone: then its address and names come from the certificate hardway ' +
      'issued for it, pki/machines/NAME/kubelet.crt (kept as the record). It is given with --node NAME or as the first argument. drain-node (on the ' +
      'first control-plane machine) cordons and drains NAME and deletes its Node, reset clears NAME, then pin-hosts and routes run on every other ' +
      'machine as if NAME were not in machines.txt. A machine that is gone for good cannot be reset: --keep-going still updates the others. ' +
      'Then remove its line from machines.txt (if it is still there); "hardway up" converges.',
    examples: [
      ['hardway remove-node --node node-2 --dry-run', 'every change it would make, changing nothing'],
      ['hardway remove-node --node node-2 --yes', 'drain node-2, delete its Node, reset it, and drop its names and routes everywhere'],
    ],
    scope: 'removal' },
  { name: 'reset', group: 'day-two', summary: 'Remove everything hardway installed on the machines', steps: ['reset'],
    confirm: 'removes every service, file, certificate and route hardway installed on the chosen machines',
    examples: [
      ['hardway reset --dry-run', 'list everything reset would remove, changing nothing'],
      ['hardway reset --node node-1 --yes', 'remove what hardway installed on node-1'],
      ['hardway reset --yes --delete-data etcd --local', "everything, etcd's data too, and the names in this machine's /etc/hosts"],
    ] },
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
  const { name, only } = commandChoice(steps);
  return commandLine(name, { ...opts, only });
}

/** The command commandFor names for `steps`, its `--only` steps (none: the whole command), and every step that line runs. */
export function commandChoice(steps: readonly StepName[]): { name: string; only: StepName[]; runs: StepName[] } {
  const fits = REMOTE_COMMANDS.filter((c) => !c.scope && !c.confirm && steps.every((s) => stepNames(c.steps).includes(s)));
  const best = [...fits].sort((a, b) => stepNames(a.steps).length - stepNames(b.steps).length)[0];
  if (!best) throw new Error(`no command runs ${steps.join(', ')}`);
  const whole = stepNames(best.steps).length === steps.length || (steps.length === 1 && best.name === steps[0]);
  return { name: best.name, only: whole ? [] : [...steps], runs: whole ? stepNames(best.steps) : [...steps] };
}

/** `hardway NAME [--only STEP...] [--node NODE]` for a remote command of the table (refused when there is none of that name). */
export function commandLine(name: string, opts: { node?: string; only?: readonly string[]; extra?: string } = {}): string {
  remoteEntry(name);
  return ['hardway', name, ...(opts.only ?? []).flatMap((s) => ['--only', s]), ...(opts.node ? ['--node', opts.node] : [])].join(' ') + (opts.extra ?? '');
}
