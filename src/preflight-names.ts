// The names of the preflight checks `up` runs on every machine before it changes anything, and
// what each is about: what cluster.yaml's preflight.ignore and up's --ignore-preflight take (the
// checks themselves are in src/preflight/). Pure data below the settings, which check names
// against it. Not the reachability check of a first run (key, address, host key): that is SSH's.

/** Every preflight check by name, with the one line --help and the docs show. */
export const PREFLIGHT_CHECKS = {
  systemd: 'systemd runs the machine (PID 1): every component hardway installs is a systemd unit',
  ports: 'the ports of the components are free, or held by the component hardway runs there (6443, 2379, 2380 on control planes; 10250 on workers)',
  'br-netfilter': 'workers: br_netfilter is loaded, built in, or loadable (kube-proxy needs bridged traffic seen by iptables)',
  clock: "the machine's clock is within 5 seconds of the jumpbox's (certificates and etcd's leases depend on it)",
  'etcd-disk': "control planes: at least 2 GiB free where etcd keeps its data (/var/lib), etcd's default space quota",
  cgroups: 'workers: the cpu, memory and pids cgroup controllers are there for the kubelet and containerd',
  packages: 'workers: the packages worker-os needs are installed, or apt has a source to install them from',
} as const;

/** The name of a preflight check. */
export type PreflightName = keyof typeof PREFLIGHT_CHECKS;

/** Every preflight check's name, in the order they run and are shown. */
export const PREFLIGHT_NAMES = Object.keys(PREFLIGHT_CHECKS) as PreflightName[];

/** The word that skips every preflight check. */
export const ALL_PREFLIGHT = 'all';
