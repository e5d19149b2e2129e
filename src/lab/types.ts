// The shapes the lab passes around: what the user asked for, the machines that follow from it, and
// what is recorded on the host so that later commands (status, ssh, down) find a lab again.

/** What `lab up` was asked for, validated. */
export interface LabSpec {
  name: string;
  servers: number;
  workers: number;
  subnet: string;
  /** Absolute directory that receives machines.txt, cluster.yaml, keys and ssh_config. */
  dir: string;
  /** A registry machine too (lab infrastructure, not in machines.txt); absent in older state files. */
  registry?: boolean;
  /** `--login-user NAME`: each machine lets in NAME (passwordless sudo, the lab key), not root; absent: root. */
  loginUser?: string;
}

/** One lab machine as planned: names, address, pod subnet and its systemd-nspawn machine name. */
export interface LabMachine {
  hostname: string;
  fqdn: string;
  ip: string;
  /** A registry is lab infrastructure: it boots like the others but is no machine of the cluster. */
  role: 'control-plane' | 'worker' | 'registry';
  podSubnet?: string;
  /** systemd-nspawn machine name, unique on the host across labs (lab name + hostname). */
  unit: string;
}

/** A whole lab as planned from a spec. */
export interface LabPlan {
  spec: LabSpec;
  bridge: string;
  /** Host side address of the bridge (first address of the subnet) with prefix, e.g. 10.240.0.1/24. */
  bridgeAddress: string;
  prefix: number;
  machines: LabMachine[];
}

/** What is written to <state>/<lab>/state.json before anything is created, so `down` can undo a half `up`. */
export interface LabState {
  version: 1;
  plan: LabPlan;
  /** Cached root filesystem the machines' overlays sit on. */
  rootfs?: string;
  /** The images `lab up --registry` last pushed into the registry, as workers pull them (localhost:5001/...). */
  registryImages?: string[];
  createdAt: string;
}
