// The shapes `hardway multipass` passes around: what the user asked for, the VMs that follow from
// it, what Multipass says about an instance, and the record of the VMs hardway launched.

/** What `multipass up` was asked for, validated. */
export interface MultipassSpec {
  prefix: string;
  servers: number;
  workers: number;
  image: string;
  cpus: number;
  memory: string;
  disk: string;
  /** Absolute directory that receives machines.txt, cluster.yaml, keys, known_hosts and ssh_config. */
  dir: string;
  /** How long Multipass may take to launch a VM, and hardway to see its address and SSH. */
  timeoutS: number;
}

/** One VM as planned: its Multipass name and the machine it is in machines.txt. */
export interface PlannedVm {
  vm: string;
  hostname: string;
  fqdn: string;
  role: 'control-plane' | 'worker';
  podSubnet?: string;
}

/** What hardway records of a VM it launched: the marker it wrote into it and the public host key it gave it. */
export interface VmRecord extends PlannedVm {
  /** Random id of this launch, also written into the VM (MARKER_FILE). */
  id: string;
  /** The public half of the host key hardway generated for the VM (OpenSSH format). */
  hostKey: string;
  launchedAt: string;
  /** The address last written to machines.txt. */
  ip?: string;
}

/** The record of one prefix: written before any launch, so `down` can undo a half `up`. */
export interface MultipassRecord {
  version: 1;
  prefix: string;
  dir: string;
  servers: number;
  workers: number;
  vms: VmRecord[];
}

/** One instance as `multipass list/info --format json` describes it. */
export interface Instance {
  name: string;
  /** As Multipass prints it: Running, Stopped, Deleted, Starting, Suspended... */
  state: string;
  /** Usable IPv4 addresses, Multipass's management address first ("N/A" and the like left out). */
  ipv4: string[];
  release?: string;
}
