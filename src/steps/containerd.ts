// containerd: the container runtime on every worker (containerd, its runc shim, runc, ctr), with
// the config written in the schema the installed containerd speaks, and the registry mirrors of
// cluster.yaml as certs.d/<registry>/hosts.toml (read at each pull: a mirror change restarts nothing;
// the directory of a registry removed from cluster.yaml goes too, if hardway wrote it).
import { markedRegistryDirs } from '../probes/containerd.ts';
import { staleRegistryChanges } from './support/registry-dirs.ts';
import { workerComponentStep } from './support/worker-component.ts';

/** The containerd step. */
export const containerdStep = workerComponentStep({
  name: 'containerd',
  title: 'Install and run containerd with runc (CRI, overlayfs, systemd cgroups) and its registry mirrors',
  binaries: ['containerd', 'containerd-shim-runc-v2', 'ctr', 'runc'],
  service: 'containerd',
  leftovers: { probe: markedRegistryDirs.ask(), changes: staleRegistryChanges },
});
