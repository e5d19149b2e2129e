// kubelet: the node agent (and crictl, its debugging client), its config with this worker's pod
// CIDR, and its unit.
import { workerComponentStep } from './support/worker-component.ts';

/** The kubelet step. */
export const kubeletStep = workerComponentStep({
  name: 'kubelet',
  title: 'Install and run the kubelet',
  binaries: ['kubelet', 'crictl'],
  files: (f) => f.services.includes('kubelet'),
  service: 'kubelet',
});
