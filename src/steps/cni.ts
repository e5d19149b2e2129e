// cni: the CNI plugins and this worker's bridge network (its own pod subnet) and loopback configs.
// containerd reads them for every new pod sandbox, so nothing restarts.
import { REQUIRED_CNI_PLUGINS } from '../download/layout.ts';
import { WORKER } from '../layout.ts';
import { workerComponentStep } from './support/worker-component.ts';

/** The cni step. */
export const cniStep = workerComponentStep({
  name: 'cni',
  title: "Install the CNI plugins and this worker's pod network configs",
  binaries: [],
  cniPlugins: REQUIRED_CNI_PLUGINS,
  files: (f) => f.path.startsWith(`${WORKER.cniConfDir}/`),
});
