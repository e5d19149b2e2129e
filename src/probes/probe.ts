// A probe: one named, read-only question to a machine, its command and how to read its answer.
// Plans, checks, doctor and reset ask machines only through probes (src/probes/index.ts is the
// registry of them all); the facts layer sends them by name, and the test machines accept only
// the names of the registry. A request can be made only by a probe's `ask`, so nothing else can
// run a command while a plan or a check reads.
import type { Command } from '../shell.ts';

/** What a machine answered to a probe: its exit code and stdout (stderr is dropped: probes only read). */
export interface ProbeAnswer {
  code: number;
  stdout: string;
}

/**
 * An answer read already, by a route other than the probe's command (src/cluster-api/ asks the API
 * server or etcd over HTTPS and reads their JSON): the probe's typed value itself, no text to parse.
 */
export interface ReadAnswer<R = unknown> {
  readonly read: R;
}

/** True for an answer a route read already (its `parse` returns it as it is). */
export function isReadAnswer(a: unknown): a is ReadAnswer {
  return typeof a === 'object' && a !== null && 'read' in a;
}

/** The parse of a request: the probe's own over a machine's answer, the value itself over one read already. */
// A route that reads an answer itself gives the probe's own type (src/cluster-api/answers.ts): taken as it is.
const readWith = <R>(parse: (answer: ProbeAnswer) => R) => (a: ProbeAnswer | ReadAnswer): R => (isReadAnswer(a) ? (a.read as R) : parse(a));

const REQUEST = Symbol('hardway.probe-request');

// Every request the constructors below issued, and nothing else: a copy (`{ ...req, cmd }`) or a
// hand-made object carrying the symbol is not in it, so its command never reaches a machine.
const ISSUED = new WeakSet<object>();

/** One probe asked with its arguments: what goes to the machine, and how its answer reads. */
export interface ProbeRequest<R = unknown> {
  readonly [REQUEST]: true;
  /** A facts request of its own kind (beside files: S, R, H). */
  readonly op: 'P';
  /** The probe's name in the registry. */
  readonly probe: string;
  /** The probe that made it: the facts layer runs only requests of the registry's own probes. */
  readonly of: object;
  readonly cmd: Command;
  /** The arguments it was asked with (a route other than the command, src/cluster-api/, answers from them). */
  readonly args: readonly unknown[];
  /** Reads a machine's answer into the probe's typed value (one read already, ReadAnswer, is that value). */
  readonly parse: (answer: ProbeAnswer | ReadAnswer) => R;
  /** Several plans asking this probe at once may share one command for the union of their items. */
  readonly merge?: { items: readonly string[]; build(items: readonly string[]): Command };
  /** A wait (until a service answers): asked on its own, for up to this many milliseconds. */
  readonly waitMs?: number;
}

/** A probe of the registry: `ask` makes a request of it with its arguments. */
export interface Probe<A extends unknown[], R> {
  readonly name: string;
  ask(...args: A): ProbeRequest<R>;
}

/** What an answer reads as, for a request or a record of them. */
export type Answer<Q> = Q extends ProbeRequest<infer R> ? R : never;

const request = <R>(fields: Omit<ProbeRequest<R>, typeof REQUEST | 'op'>): ProbeRequest<R> => {
  // Frozen: the command the facts layer sends is the one the probe built.
  const req: ProbeRequest<R> = Object.freeze({ [REQUEST]: true as const, op: 'P' as const, ...fields });
  ISSUED.add(req);
  return req;
};

/** A probe: its name, the command for its arguments, and how its answer reads (the raw answer when no parser is given). */
export function probe<A extends unknown[], R = ProbeAnswer>(name: string, command: (...args: A) => Command, parse?: (answer: ProbeAnswer) => R): Probe<A, R> {
  const read = readWith(parse ?? ((a: ProbeAnswer) => a as unknown as R));
  const self: Probe<A, R> = { name, ask: (...args) => request({ probe: name, of: self, cmd: command(...args), args, parse: read }) };
  return self;
}

/** A probe over a list of items (services, objects) that plans asking at once share: one command for all their items. */
export function mergeableProbe<R>(name: string, command: (items: readonly string[]) => Command, parse: (answer: ProbeAnswer) => R): Probe<[readonly string[]], R> {
  const read = readWith(parse);
  const self: Probe<[readonly string[]], R> = { name, ask: (items) => request({ probe: name, of: self, cmd: command(items), args: [items], parse: read, merge: { items, build: command } }) };
  return self;
}

/**
 * A wait: a probe that asks again until a service answers, up to `timeoutS` seconds (its first
 * argument); its command says on stdout why it gave up.
 */
export function waitProbe<A extends unknown[], R = ProbeAnswer>(name: string, command: (timeoutS: number, ...args: A) => Command, parse?: (answer: ProbeAnswer) => R): Probe<[number, ...A], R> {
  const read = readWith(parse ?? ((a: ProbeAnswer) => a as unknown as R));
  const self: Probe<[number, ...A], R> = { name, ask: (timeoutS, ...args) => request({ probe: name, of: self, cmd: command(timeoutS, ...args), args: [timeoutS, ...args], parse: read, waitMs: timeoutS * 1000 }) };
  return self;
}

/** True for a request made by a probe's `ask`. */
export function isProbeRequest(x: unknown): x is ProbeRequest {
  return typeof x === 'object' && x !== null && REQUEST in x;
}

/** True only for a request one of this module's constructors issued itself (not a copy, not a look-alike): the facts layer runs no other. */
export function isIssuedRequest(x: unknown): boolean {
  return typeof x === 'object' && x !== null && ISSUED.has(x);
}

/** The same request over other items (the union of what plans asking at once want). */
export function withItems<R>(req: ProbeRequest<R>, items: readonly string[]): ProbeRequest<R> {
  if (!req.merge) return req;
  return request({ probe: req.probe, of: req.of, cmd: req.merge.build(items), args: [items], parse: req.parse, merge: { items, build: req.merge.build } });
}
