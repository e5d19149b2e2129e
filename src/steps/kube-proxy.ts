// kube-proxy: Service routing in iptables mode, for the cluster CIDR.
import { workerComponentStep } from './support/worker-component.ts';

/** The kube-proxy step. */
export const kubeProxyStep = workerComponentStep({
  name: 'kube-proxy',
  title: 'Install and run kube-proxy (iptables mode)',
  binaries: ['kube-proxy'],
  service: 'kube-proxy',
});
