// kubelet: the node agent, its config with this worker's pod CIDR, and its unit; crictl (the
// CRI debugging client) goes along when downloads/ has it (Debian has no package for it).
import { workerComponentStep } from './support/worker-component.ts';

/** The kubelet step. */
export const kubeletStep = workerComponentStep({
  name: 'kubelet',
  title: 'Install and run the kubelet',
  binaries: ['kubelet'],
  optionalBinaries: ['crictl'],
  service: 'kubelet',
});
