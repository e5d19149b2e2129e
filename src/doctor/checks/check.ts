// What a doctor check is: one object, registered by being exported from a module of ./index.ts. Its
// name (a finding's `check`), its rank (most likely cause first), what it looks at (a line of
// doctor's --help), the probes of the registry it asks each machine (by the key its answer is kept
// under in the evidence), its judgement of their typed answers (or of the steps' plans, or of the
// API's answer), and which findings of other checks its own explain: an explained finding is told
// in the evidence of the first finding, as printed, that explains it, instead of standing beside
// it. Nothing here folds by hand: diagnose.ts does it once, from these declarations.
import type { Inventory, Machine } from '../../inventory.ts';
import type { Answer, ProbeAnswer, ProbeRequest } from '../../probes/probe.ts';
import type { StepName } from '../../steps/index.ts';
import type { Fix } from '../fixes.ts';
import type { ApiEvidence, DnsPod, DoctorContext, DriftEvidence, MachineEvidence } from '../types.ts';

/** What a check's probes are chosen from: the machine, the inventory, the rendered files doctor compares there, the images to test-pull. */
export interface AskOf {
  inventory: Inventory;
  machine: Machine;
  /** The paths of the rendered files doctor compares on this machine. */
  rendered: readonly string[];
  /** The images test-pulled through the mirrors (known only once the API answered: see `later`). */
  testImages: readonly string[];
  /** The cluster DNS pods the API listed (known only once the API answered: see `later`). */
  dnsPods: readonly DnsPod[];
}

/** A finding as a check judges it: the fix as data, and what it is about for the checks that explain it (never printed). */
export interface Judged {
  machine: string;
  check: string;
  cause: string;
  evidence: string;
  fix: Fix | null;
  about?: About;
}

/** What a finding is about, beyond its text: what the explains rules of other checks read. */
export interface About {
  /** The step whose plan has changes (drift). */
  step?: StepName;
  /** What part of its check it is (e.g. `config` for containerd's config file, `service kubelet` for a unit, `port etcd` for a port, `pod` for a CoreDNS pod). */
  kind?: string;
  /** A pod that does not start: its node is not Ready; it cannot pull its image. */
  nodeNotReady?: boolean;
  imagePull?: boolean;
  /** The node's state as `kubectl get nodes` says it (node). */
  state?: string;
}

/** A finding as a judge returns it: its check is the one judging. */
export type Found = Omit<Judged, 'check'>;

/**
 * Whether finding `mine` explains `theirs`: false, or true; or a preference, 0 first (a finding
 * goes into the first, as printed, of those its most preferred rule names).
 */
export type ExplainRule = (mine: Judged, theirs: Judged) => boolean | number;

/** The answers of a machine to a check's probes, each as its probe reads it; absent when the evidence holds none (not asked, or recorded before it was). */
export type MachineAnswers<T extends Asked> = { [K in keyof T]?: Answer<NonNullable<T[K]>> };

/** What a check asks, by key (a key may be left out for a machine of another role). */
export type Asked = Record<string, ProbeRequest | undefined>;

/** What a machine judge is given. */
export interface OnMachine<T extends Asked> {
  ctx: DoctorContext;
  machine: Machine;
  answers: MachineAnswers<T>;
  /** Text files read by path (`reads`): content, or null when missing; absent when not read. */
  files: MachineEvidence['files'];
}

/** One doctor check. */
export interface DoctorCheck<N extends string = string, T extends Asked = Asked> {
  name: N;
  /** Its place in the report: lower first (likelier causes first). Numbers leave gaps, so a new check takes one between its neighbours. */
  rank: number;
  /**
   * What it looks at, in one line for the user: `hardway doctor --help` lists every check with it,
   * in rank order (written here, beside the judge it describes, so no doc lists checks by hand).
   */
  looks: string;
  /** The probes it asks a reachable machine, by the key their answers are kept under (a key two checks share must ask the same). */
  asks?: (q: AskOf) => T;
  /** Asked beside the main batch once the API answered (the test images and the cluster DNS pods may come from it). */
  later?: boolean;
  /** Text files it reads on the machine (never a key or a kubeconfig). */
  reads?: (q: AskOf) => string[];
  /** Its judgement of one reachable machine. */
  judge?: (on: OnMachine<T>) => Found[];
  /** Its judgement of a machine that did not answer. */
  unreachable?: (ctx: DoctorContext, m: Machine, u: NonNullable<MachineEvidence['unreachable']>) => Found[];
  /** Its judgement of the steps' read-only plans on a reachable machine. */
  plans?: (ctx: DoctorContext, m: Machine, drift: DriftEvidence[]) => Found[];
  /** Its judgement of the API's answer (when the API answered). */
  api?: (ctx: DoctorContext, api: ApiEvidence) => Found[];
  /** Its judgement when the API did not answer. */
  apiDown?: (ctx: DoctorContext, api: ApiEvidence) => Found[];
  /** The checks whose findings its own explain, and when. */
  explains?: Readonly<Record<string, ExplainRule>>;
  /** When any other finding explains one of its own (a rule over every check, e.g. a fix that runs a drift's step). */
  explainedBy?: (by: Judged, mine: Judged, explains: (a: Judged, b: Judged) => boolean) => boolean | number;
  /** What goes into the explaining finding's evidence (default: its own evidence). */
  note?: (mine: Judged) => string;
  /** The check whose rank a finding of it takes instead (a symptom placed with the symptoms), if any. */
  rankAs?: (f: { fix: unknown }) => string | undefined;
}

/** A doctor check, its answers typed by what it asks. */
export function doctorCheck<const N extends string, T extends Asked = Record<string, never>>(c: DoctorCheck<N, T>): DoctorCheck<N> {
  return c as unknown as DoctorCheck<N>;
}

/** A finding of `mine` on the same machine as `theirs`: the common explains rule. */
export const sameMachine: ExplainRule = (mine, theirs) => mine.machine === theirs.machine;

/** The raw answer of a probe that has no parser of its own, as the check reads it (its stdout, '' when absent). */
export const stdoutOf = (a: ProbeAnswer | undefined): string => a?.stdout ?? '';
