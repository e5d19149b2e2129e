// Where every file lives: in pki/ on the jumpbox and on the machines. One table that the
// certificate, render and step code all read, so a path is written down once.

/** Files in the project's pki/ directory (relative to the project directory). */
export const PKI = {
  dir: 'pki',
  ca: { crt: 'pki/ca.crt', key: 'pki/ca.key' },
  etcdCa: { crt: 'pki/etcd-ca.crt', key: 'pki/etcd-ca.key' },
  /** During a CA rotation (`certs --renew-ca`): the new cluster CA, trusted but not signing yet. */
  caNext: { crt: 'pki/ca-next.crt', key: 'pki/ca-next.key' },
  /** After the switch of a CA rotation: the old cluster CA, still trusted until the rotation ends, then kept. */
  caPrevious: { crt: 'pki/ca-previous.crt', key: 'pki/ca-previous.key' },
  /** During a rotation of the etcd CA (`certs --renew-ca etcd-ca`): the new etcd CA, trusted but not signing yet. */
  etcdCaNext: { crt: 'pki/etcd-ca-next.crt', key: 'pki/etcd-ca-next.key' },
  /** After the switch of an etcd CA rotation: the old etcd CA, still trusted until the rotation ends, then kept. */
  etcdCaPrevious: { crt: 'pki/etcd-ca-previous.crt', key: 'pki/etcd-ca-previous.key' },
  /** `name` is a cluster-wide identity (admin, kube-proxy, kube-api-server, etcd-client, ...), never a machine name. */
  crt: (name: string) => `pki/${name}.crt`,
  key: (name: string) => `pki/${name}.key`,
  kubeconfig: (name: string) => `pki/${name}.kubeconfig`,
  encryptionConfig: 'pki/encryption-config.yaml',
  /**
   * Each machine's own files live in a directory of their own, pki/machines/<hostname>/, so no
   * hostname (a DNS label: no "/" and never "." or "..") can name a file of the CA or of another
   * identity, whatever identities exist now or later.
   */
  machinesDir: 'pki/machines',
  machine: (hostname: string, role: MachineRole) => ({
    crt: `pki/machines/${hostname}/${role}.crt`,
    key: `pki/machines/${hostname}/${role}.key`,
    kubeconfig: `pki/machines/${hostname}/${role}.kubeconfig`,
  }),
} as const;

/** What a machine's own certificate is for: a worker's kubelet, a control plane's etcd member. */
export type MachineRole = 'kubelet' | 'etcd-server';

/** Paths on a control-plane machine. */
export const SERVER = {
  bin: '/usr/local/bin',
  k8sDir: '/var/lib/kubernetes',
  caCrt: '/var/lib/kubernetes/ca.crt',
  caKey: '/var/lib/kubernetes/ca.key',
  /**
   * The CA certificate the controller manager signs with: the first certificate of pki/ca.crt
   * alone (it refuses a file of several), while ca.crt may hold two CAs during a CA rotation.
   */
  caSigningCrt: '/var/lib/kubernetes/ca-signing.crt',
  apiServerCrt: '/var/lib/kubernetes/kube-api-server.crt',
  apiServerKey: '/var/lib/kubernetes/kube-api-server.key',
  serviceAccountsCrt: '/var/lib/kubernetes/service-accounts.crt',
  serviceAccountsKey: '/var/lib/kubernetes/service-accounts.key',
  encryptionConfig: '/var/lib/kubernetes/encryption-config.yaml',
  controllerManagerKubeconfig: '/var/lib/kubernetes/kube-controller-manager.kubeconfig',
  schedulerKubeconfig: '/var/lib/kubernetes/kube-scheduler.kubeconfig',
  adminKubeconfig: '/var/lib/kubernetes/admin.kubeconfig',
  /** The API server's client certificate towards etcd (signed by the etcd CA). */
  etcdClientCrt: '/var/lib/kubernetes/etcd-client.crt',
  etcdClientKey: '/var/lib/kubernetes/etcd-client.key',
  etcdCaCrt: '/var/lib/kubernetes/etcd-ca.crt',
  schedulerConfig: '/etc/kubernetes/config/kube-scheduler.yaml',
  etcdDataDir: '/var/lib/etcd',
  /** etcd's own serving/peer certificate and the CA it trusts for clients and peers. */
  etcdPkiDir: '/etc/etcd',
  etcdCrt: '/etc/etcd/server.crt',
  etcdKey: '/etc/etcd/server.key',
  etcdCa: '/etc/etcd/ca.crt',
  auditLog: '/var/log/audit.log',
  /** The API server's audit policy (without one, --audit-log-path writes nothing). */
  auditPolicy: '/var/lib/kubernetes/audit-policy.yaml',
  /** Scheduled etcd snapshots (etcd.snapshots), on one control plane: outside etcd's data dir, which a restore moves aside. */
  etcdSnapshotsDir: '/var/backups/etcd-snapshots',
  /** The script the snapshot service runs: save one, keep the newest N. */
  etcdSnapshotScript: '/usr/local/bin/hardway-etcd-snapshot',
  etcdSnapshotService: '/etc/systemd/system/hardway-etcd-snapshot.service',
  etcdSnapshotTimer: '/etc/systemd/system/hardway-etcd-snapshot.timer',
} as const;

/** Paths on a worker. */
export const WORKER = {
  bin: '/usr/local/bin',
  cniBin: '/opt/cni/bin',
  cniConfDir: '/etc/cni/net.d',
  cniBridgeConf: '/etc/cni/net.d/10-bridge.conf',
  cniLoopbackConf: '/etc/cni/net.d/99-loopback.conf',
  containerdConfig: '/etc/containerd/config.toml',
  /** containerd's registry host directories (config_path): one <registry>/hosts.toml per registry of cluster.yaml. */
  containerdCertsDir: '/etc/containerd/certs.d',
  kubeletDir: '/var/lib/kubelet',
  kubeletCaCrt: '/var/lib/kubelet/ca.crt',
  kubeletCrt: '/var/lib/kubelet/kubelet.crt',
  kubeletKey: '/var/lib/kubelet/kubelet.key',
  kubeletKubeconfig: '/var/lib/kubelet/kubeconfig',
  kubeletConfig: '/var/lib/kubelet/kubelet-config.yaml',
  kubeProxyKubeconfig: '/var/lib/kube-proxy/kubeconfig',
  kubeProxyConfig: '/var/lib/kube-proxy/kube-proxy-config.yaml',
  /**
   * The node-local haproxy's config (several control planes): 127.0.0.1:apiPort spread over every
   * API server. A file of hardway's own: Debian's /etc/haproxy/haproxy.cfg stays as the package (or
   * the machine's admin) left it.
   */
  apiProxyConfig: '/etc/haproxy/hardway-api-proxy.cfg',
  /** The drop-in that points Debian's haproxy.service at apiProxyConfig. */
  apiProxyDropIn: '/etc/systemd/system/haproxy.service.d/hardway-api-proxy.conf',
  modulesLoad: '/etc/modules-load.d/hardway-kubernetes.conf',
  sysctl: '/etc/sysctl.d/90-hardway-kubernetes.conf',
  /** Image archives from the project's images/, kept here after containerd imported them. */
  imagesDir: '/var/lib/hardway/images',
} as const;

/** Paths on every machine. */
export const ANY = {
  units: '/etc/systemd/system',
  hosts: '/etc/hosts',
  hostname: '/etc/hostname',
  /** cloud-init's hosts template for a distribution (`debian`, `ubuntu`, `redhat`, ...). */
  cloudHostsTemplate: (distro: string) => `/etc/cloud/templates/hosts.${distro}.tmpl`,
  routesUnit: '/etc/systemd/system/hardway-pod-routes.service',
  /** The oneshot unit that puts hardway's pod forwarding rules into the filter table at boot (workers). */
  podForwardingUnit: '/etc/systemd/system/hardway-pod-forwarding.service',
  /**
   * One empty file per service a run is about to restart, written before the service's new inputs
   * are renamed in and removed by the restart itself: a run killed in between leaves it, and the
   * rerun (which finds every file already right) restarts the service because of it.
   */
  restartDue: '/var/lib/hardway/restart-due',
} as const;

/** The markers around the block hardway owns in /etc/hosts and the cloud-init template. */
export const HOSTS_MARKERS = {
  begin: '# BEGIN hardway: cluster machines (managed by hardway pin-hosts; edits are replaced)',
  end: '# END hardway: cluster machines',
} as const;
