// Every step's name, once, with what kind of step it is: the step registry (./index.ts) must load
// exactly these, and what renders files tags them with the step that installs them (RenderStep),
// derived from here rather than listed again.

/** Every step by name: `renders` for a step that installs rendered files, `component` for a worker component with a unit of its own. */
export const STEP_NAMES = {
  'pin-hosts': { renders: true },
  distribute: {},
  'bootstrap-etcd': { renders: true },
  'bootstrap-control-plane': { renders: true },
  'kubelet-rbac': {},
  'worker-os': { renders: true },
  containerd: { renders: true, component: true },
  images: {},
  cni: { renders: true, component: true },
  'api-proxy': { renders: true },
  kubelet: { renders: true, component: true },
  'kube-proxy': { renders: true, component: true },
  routes: { renders: true },
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
