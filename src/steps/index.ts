// The step registry: step name -> its CLI options and how to load it. Commands are lists of these
// names (src/commands/step-lists.ts); a name that is not registered here is "not implemented yet".
import type { OptionSpec } from '../cli/command.ts';
import type { Step } from '../engine/types.ts';

/** A registered step: options it adds to every command that runs it, and a lazy loader. */
export interface StepEntry {
  options?: Record<string, OptionSpec>;
  load(): Promise<Step>;
}

/** Every step hardway has, by the name the user types with --only. */
export const STEPS: Record<string, StepEntry> = {
  'pin-hosts': {
    options: {
      local: { type: 'boolean', description: "pin-hosts: also put the block into this machine's (the jumpbox's) own /etc/hosts" },
    },
    load: async () => (await import('./pin-hosts.ts')).pinHostsStep,
  },
  distribute: { load: async () => (await import('./distribute.ts')).distributeStep },
  'bootstrap-etcd': { load: async () => (await import('./bootstrap-etcd.ts')).bootstrapEtcdStep },
  'bootstrap-control-plane': { load: async () => (await import('./bootstrap-control-plane.ts')).bootstrapControlPlaneStep },
  'kubelet-rbac': {
    options: {
      'api-timeout': { type: 'string', arg: 'SECONDS', default: '120', range: [1, 3600], description: 'kubelet-rbac: how long to wait for the API server to answer' },
    },
    load: async () => (await import('./kubelet-rbac.ts')).kubeletRbacStep,
  },
  'worker-os': { load: async () => (await import('./worker-os.ts')).workerOsStep },
  containerd: { load: async () => (await import('./containerd.ts')).containerdStep },
  images: { load: async () => (await import('./images.ts')).imagesStep },
  cni: { load: async () => (await import('./cni.ts')).cniStep },
  kubelet: { load: async () => (await import('./kubelet.ts')).kubeletStep },
  'kube-proxy': { load: async () => (await import('./kube-proxy.ts')).kubeProxyStep },
  routes: { load: async () => (await import('./routes.ts')).routesStep },
  verify: {
    options: {
      'ready-timeout': { type: 'string', arg: 'SECONDS', default: '60', range: [0, 3600], description: 'verify: how long to wait for every node to be Ready' },
    },
    load: async () => (await import('./verify.ts')).verifyStep,
  },
  smoke: {
    options: { image: { type: 'string', arg: 'IMAGE', default: 'nginx:stable', description: 'smoke: the image the test deployment runs (the workers must be able to pull it)' } },
    load: async () => (await import('./smoke.ts')).smokeStep,
  },
};

/** True if a step of this name is registered. */
export function isRegistered(name: string): boolean {
  return Object.hasOwn(STEPS, name);
}

/** Loads registered steps in the given order. */
export async function loadSteps(names: readonly string[]): Promise<Step[]> {
  return Promise.all(names.map((n) => STEPS[n]!.load()));
}
