// The step registry: every step by the name the user types with --only, the options it adds to the
// commands that run it (declared in ./options.ts), and how to load it. Commands name these steps
// in the one command table (src/commands/index.ts).
import type { Step } from '../engine/types.ts';
import type { StepOptionName } from './options.ts';
import type { StepName } from '../step-names.ts';

export type { StepName } from '../step-names.ts';

/** A registered step: the options it adds to every command that runs it, and a lazy loader. */
export interface StepEntry {
  options?: readonly StepOptionName[];
  load(): Promise<Step>;
}

/** Every step hardway has. */
export const STEPS = {
  preflight: { options: ['ignore-preflight'], load: async () => (await import('./preflight.ts')).preflightStep },
  'pin-hosts': { options: ['local'], load: async () => (await import('./pin-hosts.ts')).pinHostsStep },
  distribute: { options: ['api-timeout'], load: async () => (await import('./distribute.ts')).distributeStep },
  'bootstrap-etcd': { load: async () => (await import('./bootstrap-etcd.ts')).bootstrapEtcdStep },
  'bootstrap-control-plane': { load: async () => (await import('./bootstrap-control-plane.ts')).bootstrapControlPlaneStep },
  'kubelet-rbac': { options: ['api-timeout'], load: async () => (await import('./kubelet-rbac.ts')).kubeletRbacStep },
  'worker-os': { load: async () => (await import('./worker-os.ts')).workerOsStep },
  containerd: { load: async () => (await import('./containerd.ts')).containerdStep },
  images: { load: async () => (await import('./images.ts')).imagesStep },
  cni: { load: async () => (await import('./cni.ts')).cniStep },
  'api-proxy': { load: async () => (await import('./api-proxy.ts')).apiProxyStep },
  kubelet: { load: async () => (await import('./kubelet.ts')).kubeletStep },
  'kube-proxy': { load: async () => (await import('./kube-proxy.ts')).kubeProxyStep },
  'pod-forwarding': { load: async () => (await import('./pod-forwarding.ts')).podForwardingStep },
  'etcd-snapshots': { load: async () => (await import('./etcd-snapshots.ts')).etcdSnapshotsStep },
  routes: { load: async () => (await import('./routes.ts')).routesStep },
  dns: { options: ['api-timeout', 'ready-timeout'], load: async () => (await import('./dns.ts')).dnsStep },
  verify: { options: ['ready-timeout'], load: async () => (await import('./verify.ts')).verifyStep },
  reset: { options: ['local', 'delete-data'], load: async () => (await import('./reset.ts')).resetStep },
  'drain-node': { load: async () => (await import('./drain-node.ts')).drainNodeStep },
  smoke: { options: ['web-image'], load: async () => (await import('./smoke.ts')).smokeStep },
} satisfies Record<StepName, StepEntry>;
