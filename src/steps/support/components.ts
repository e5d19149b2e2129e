// The services each kind of machine runs: the steps install them, verify checks them.

/** The control-plane services, in start order. */
export const CONTROL_PLANE_SERVICES = ['kube-apiserver', 'kube-controller-manager', 'kube-scheduler'] as const;

/** The worker services hardway runs (each its own step). */
export const WORKER_SERVICES = ['containerd', 'kubelet', 'kube-proxy'] as const;
