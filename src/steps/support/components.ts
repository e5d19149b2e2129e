// The services each kind of machine runs: the steps install them, verify and doctor check them.

/** The control-plane services, in start order. */
export const CONTROL_PLANE_SERVICES = ['kube-apiserver', 'kube-controller-manager', 'kube-scheduler'] as const;

/** The worker services hardway runs (each its own step). */
export const WORKER_SERVICES = ['containerd', 'kubelet', 'kube-proxy'] as const;

/** The sysctls pod networking needs on a worker, each wanted at 1 (worker-os sets them, doctor reads them). */
export const WORKER_SYSCTLS = ['net.bridge.bridge-nf-call-iptables', 'net.bridge.bridge-nf-call-ip6tables', 'net.ipv4.ip_forward'];
