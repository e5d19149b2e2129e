// The shapes of `hardway doctor`: what it gathers from each machine and from the API (evidence),
// and what it concludes (findings). Gathering reads; everything after it is pure functions of these.
import type { ProbeResult } from '../engine/facts.ts';
import type { PodProblem } from '../steps/support/pods.ts';
import type { Inventory } from '../inventory.ts';
import type { StepName } from '../steps/index.ts';

/** One problem doctor found: where, which check, why, what showed it, and the command that fixes it. */
export interface Finding {
  machine: string;
  /** The check that found it: one of CHECKS (checks/index.ts), whose order ranks the findings. */
  check: string;
  cause: string;
  /** The command that showed it and the line it printed (`getent hosts server.kubernetes.local: (no answer)`). */
  evidence: string;
  /** The hardway command line that fixes it, as a user types it (its fix as data, printed); null when no hardway command can. */
  fix: string | null;
}

/** What one machine answered to doctor's one batch of read-only requests, or why it did not. */
export interface MachineEvidence {
  machine: string;
  /** Set when the machine could not be asked over SSH: what failed, the transport's message and hint. */
  unreachable?: { kind: 'connect' | 'host-key' | 'auth' | 'no-key' | 'facts'; message: string; hint?: string };
  /** Each step of `up` whose read-only plan on this machine has changes (see drift.ts); undefined when not planned. */
  drift?: DriftEvidence[];
  /** Each probe's answer by name (see probes.ts); stdout only, stderr folded in where a probe needs it. */
  probes: Record<string, ProbeResult>;
  /** Text files read by path (never a key or a kubeconfig): content, or null when missing. */
  files: Record<string, string | null>;
}

/** What one step would change on a machine: a line per change, never a file's content. */
export interface DriftEvidence {
  step: StepName;
  changes: string[];
}

/** The last warning event of a pod: why it does not start, in the kubelet's or scheduler's words. */
export interface PodEvent {
  namespace: string;
  pod: string;
  reason: string;
  message: string;
}

/** A node as the API reports it. */
export interface NodeState {
  name: string;
  /** The Ready condition's status: 'True', 'False', 'Unknown'; '' when the node has none yet. */
  ready: string;
  reason?: string;
  message?: string;
  podCidr?: string;
}

/** What the API said, asked from the jumpbox with pki/jumpbox.kubeconfig. */
export interface ApiEvidence {
  /** The command as a user could rerun it. */
  command: string;
  /** Set when the API could not be asked: the last line of kubectl's stderr (or why kubectl did not run). */
  error?: string;
  nodes: NodeState[];
  /** Images that pods on each node run, for the test pulls through registry mirrors. */
  podImages: { node: string; image: string }[];
  /** Every pod that is not Running and ready, with the API's reason. */
  podProblems: PodProblem[];
  /** The latest warning event of each pod that has one. */
  podEvents?: PodEvent[];
  /** The cluster DNS add-on's Deployment (kube-system/coredns): replicas wanted and ready; undefined when it does not exist. */
  dnsDeployment?: { replicas: number; ready: number };
  /** The cluster DNS pods that are Ready, not being deleted, with an address: what doctor's function checks reach across nodes. */
  dnsPods?: DnsPod[];
}

/** A cluster DNS (CoreDNS) pod that runs: its name, its node and its pod IP. */
export interface DnsPod {
  name: string;
  node: string;
  ip: string;
}

/** The lab the project belongs to, when it is one (`hardway lab up` wrote its directory). */
export interface LabContext {
  name: string;
  /** Lab machines whose systemd-nspawn process runs. */
  running: string[];
  /** The lab has a registry machine (`lab up --registry`). */
  registry: boolean;
  /** The images `lab up --registry` pushed into it. */
  registryImages: string[];
}

/** What the findings are judged against: the inventory and what hardway would have installed. */
export interface DoctorContext {
  inventory: Inventory;
  /** pki/ca.crt of the project (PEM), or undefined when pki/ has none. */
  caPem?: string;
  /** pki/ files by pki path (certificates only, never keys), as the machines should have them. */
  pki: Record<string, string | undefined>;
  /** Per machine, the rendered text files doctor compares (CNI configs, hosts.toml, containerd config). */
  rendered: Record<string, Record<string, string>>;
  /** The lab, when the project is one. */
  lab?: LabContext;
  /** Arguments every suggested command needs too (e.g. `--machines FILE`), with a leading space, or ''. */
  projectArgs: string;
  /** The images test-pulled on every worker through the mirrors. */
  testImages: string[];
  /** The image names the archives of images/ hold (what `hardway images` loads); undefined: not read. */
  archived?: string[];
  /** The cluster DNS pods the API listed (Ready, not being deleted, with an address); none when it did not answer. */
  dnsPods?: DnsPod[];
  /** Machine clock fallback for certificate checks (ms since the epoch), when a machine did not say. */
  now: number;
}
