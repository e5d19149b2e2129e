// The services each kind of machine runs: the steps install them, verify and doctor check them.

// The services themselves are named once, by the step that runs each (the step table of command-table.ts).
export { CONTROL_PLANE_SERVICES, WORKER_SERVICES } from '../../command-table.ts';

/** The sysctls pod networking needs on a worker, each wanted at 1 (worker-os sets them, doctor reads them). */
export const WORKER_SYSCTLS = ['net.bridge.bridge-nf-call-iptables', 'net.bridge.bridge-nf-call-ip6tables', 'net.ipv4.ip_forward'];
