// containerd: the container runtime on every worker (containerd, its runc shim, runc, ctr), with
// the config written in the schema the installed containerd speaks.
import { workerComponentStep } from './support/worker-component.ts';

/** The containerd step. */
export const containerdStep = workerComponentStep({
  name: 'containerd',
  title: 'Install and run containerd with runc (CRI, overlayfs, systemd cgroups)',
  binaries: ['containerd', 'containerd-shim-runc-v2', 'ctr', 'runc'],
  files: (f) => f.services.includes('containerd'),
  service: 'containerd',
});
