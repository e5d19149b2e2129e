// Reading what `multipass list --format json` and `multipass info --format json` print. The shapes
// are Multipass's own (src/client/cli/formatter/json_formatter.cpp; samples in
// test/fixtures/multipass/samples): {"list": [{name, state, ipv4, release}]} and
// {"errors": [], "info": {NAME: {state, ipv4, release, image_release, ...}}}. Pure.
import { FailureError } from '../errors.ts';
import { parseIPv4 } from '../net/ipv4.ts';
import type { Instance } from './types.ts';

/** True if Multipass says the instance runs (any capitalisation: 2018 releases printed RUNNING). */
export function isRunning(state: string): boolean {
  return state.toLowerCase() === 'running';
}

/** True if the instance is deleted but not purged. */
export function isDeleted(state: string): boolean {
  return state.toLowerCase() === 'deleted';
}

/** The instances of `multipass list --format json`. */
export function parseList(text: string): Instance[] {
  const doc = parse(text, 'list');
  const list = (doc as { list?: unknown }).list;
  if (!Array.isArray(list)) throw shapeError('list', 'no "list" array');
  return list.map((e, i) => instance(e, undefined, `list[${i}]`));
}

/** The instances of `multipass info --format json`, by name (snapshot-only entries left out). */
export function parseInfo(text: string): Map<string, Instance> {
  const doc = parse(text, 'info');
  const info = (doc as { info?: unknown }).info;
  if (!isObject(info)) throw shapeError('info', 'no "info" object');
  const out = new Map<string, Instance>();
  for (const [name, value] of Object.entries(info)) {
    // `info --snapshots` entries carry only {"snapshots": {...}}: not an instance description.
    if (isObject(value) && !('state' in value) && 'snapshots' in value) continue;
    out.set(name, instance(value, name, `info.${name}`));
  }
  return out;
}

function instance(value: unknown, name: string | undefined, where: string): Instance {
  if (!isObject(value)) throw shapeError(where, 'not an object');
  const n = name ?? value.name;
  if (typeof n !== 'string' || n === '') throw shapeError(where, 'no "name"');
  if (typeof value.state !== 'string') throw shapeError(where, 'no "state"');
  const ipv4 = value.ipv4 === undefined ? [] : value.ipv4;
  if (!Array.isArray(ipv4)) throw shapeError(where, '"ipv4" is not an array');
  // Multipass prints "N/A" when it knows no address and "" in some formats; keep real addresses only.
  const addresses = ipv4.filter((a): a is string => typeof a === 'string' && parseIPv4(a) !== undefined);
  const release = typeof value.release === 'string' && value.release !== '' ? value.release : undefined;
  return { name: n, state: value.state, ipv4: [...new Set(addresses)], ...(release ? { release } : {}) };
}

function parse(text: string, cmd: string): unknown {
  try {
    const doc: unknown = JSON.parse(text);
    if (!isObject(doc)) throw new Error('not an object');
    return doc;
  } catch {
    const start = text.trim().slice(0, 200);
    throw new FailureError(`multipass ${cmd} --format json printed something that is not its JSON: ${start ? JSON.stringify(start) : '(nothing)'}`,
      'check that "multipass version" works and prints a 1.x release');
  }
}

function shapeError(where: string, what: string): FailureError {
  return new FailureError(`multipass printed JSON hardway does not understand: ${where}: ${what}`,
    'a Multipass release with another JSON shape; report it with the output of "multipass info --format json"');
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
