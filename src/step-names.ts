// Every step's name, once, with what kind of step it is: the step registry (steps/index.ts) must load
// exactly these, and what renders files tags them with the step that installs them (RenderStep),
// derived from here rather than listed again. The systemd services hardway runs are named here too,
// each by the step that installs and starts it: verify, doctor and its bundle derive theirs.

/**
 * Every step by name: `renders` for a step that installs rendered files, `component` for a worker
 * component with a unit of its own, `services` for the systemd services it installs and runs (in
 * start order).
 */
export const STEP_NAMES = {
  preflight: {},
  'pin-hosts': { renders: true },
  distribute: {},
  'bootstrap-etcd': { renders: true, services: ['etcd'] },
  'bootstrap-control-plane': { renders: true, services: ['kube-apiserver', 'kube-controller-manager', 'kube-scheduler'] },
  'kubelet-rbac': {},
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
  dns: {},
  verify: {},
  reset: {},
  'drain-node': {},
  smoke: {},
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
