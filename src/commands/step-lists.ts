// Each remote command is an ordered list of step names (registered in src/steps/index.ts).

/** The worker's steps, one per component, so each reruns alone (`--only kubelet`). */
const WORKER_STEPS = ['worker-os', 'containerd', 'cni', 'kubelet', 'kube-proxy'] as const;

/** The steps each remote command runs, in order. */
export const COMMAND_STEPS: Record<string, readonly string[]> = {
  'pin-hosts': ['pin-hosts'],
  distribute: ['distribute'],
  'bootstrap-etcd': ['bootstrap-etcd'],
  'bootstrap-control-plane': ['bootstrap-control-plane', 'kubelet-rbac'],
  'bootstrap-workers': WORKER_STEPS,
  routes: ['routes'],
  verify: ['verify'],
  images: ['images'],
  smoke: ['smoke'],
  // The images go in once containerd runs and before the kubelet, which needs the sandbox image.
  up: ['pin-hosts', 'distribute', 'bootstrap-etcd', 'bootstrap-control-plane', 'kubelet-rbac', ...WORKER_STEPS.flatMap((s) => (s === 'containerd' ? [s, 'images'] : [s])), 'routes', 'verify'],
};

/** Commands that first make pki/ (certs, kubeconfigs, encryption config) on the jumpbox; not with --dry-run. */
export const PREPARES_PKI: ReadonlySet<string> = new Set(['up']);
