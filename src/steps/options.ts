// The options steps add to the commands that run them: each declared once, with its one default,
// and read by the steps through typed accessors, so no step repeats a default of its own.
import type { OptionSpec } from '../option-spec.ts';
import type { StepOptions } from '../engine/types.ts';
import { ALL_PREFLIGHT, PREFLIGHT_NAMES } from '../preflight-names.ts';

/** Every step option: its CLI spec (which is also its --help line and its one default). */
export const STEP_OPTIONS = {
  local: { type: 'boolean', description: "this machine's (the jumpbox's) own /etc/hosts too: pin-hosts puts the block of names in, reset takes it out" },
  'api-timeout': { type: 'string', arg: 'SECONDS', default: '120', range: [1, 3600], description: 'kubelet-rbac, distribute, dns: how long to wait for the API server to answer (after a restart)' },
  'ready-timeout': { type: 'string', arg: 'SECONDS', default: '60', range: [0, 3600], description: 'verify: how long to wait for every node to be Ready and CoreDNS available; dns: for CoreDNS (at least 60)' },
  'delete-data': { type: 'string', multiple: true, arg: 'WHAT', choices: ['etcd'], description: "reset: also delete this data, named: etcd (/var/lib/etcd, the whole cluster state); kept otherwise" },
  'ignore-preflight': { type: 'string', multiple: true, arg: 'NAME', choices: [...PREFLIGHT_NAMES, ALL_PREFLIGHT], description: `preflight: skip this check, or ${ALL_PREFLIGHT}: ${PREFLIGHT_NAMES.join(', ')}` },
  'web-image': { type: 'string', arg: 'IMAGE', default: 'nginx:stable', formerly: 'image', description: 'smoke: the web server image (HTTP on port 80) the test deployment runs; the workers must be able to pull it' },
  'rollout-timeout': { type: 'string', arg: 'SECONDS', default: '180', range: [1, 3600], description: "smoke: how long to wait for the test deployment's pod to run (pulling the web image included)" },
} as const satisfies Record<string, OptionSpec>;

/** The name of a step option. */
export type StepOptionName = keyof typeof STEP_OPTIONS;

type Named<T extends OptionSpec['type']> = { [K in StepOptionName]: (typeof STEP_OPTIONS)[K]['type'] extends T ? K : never }[StepOptionName];

/** A flag option: set, or false. */
export function flagOption(options: StepOptions, name: Named<'boolean'>): boolean {
  return options.values[name] === true;
}

/** A string option as given, else its default. */
export function textOption(options: StepOptions, name: 'web-image'): string {
  const v = options.values[name];
  return typeof v === 'string' ? v : STEP_OPTIONS[name].default;
}

/** A repeatable option's values as given (none when not given). */
export function listOption(options: StepOptions, name: 'delete-data' | 'ignore-preflight'): string[] {
  const v = options.values[name];
  return Array.isArray(v) ? v : typeof v === 'string' ? [v] : [];
}

/** An option with a range: a whole number (the CLI checks it). */
type NumberOptionName = { [K in StepOptionName]: (typeof STEP_OPTIONS)[K] extends { range: readonly [number, number] } ? K : never }[StepOptionName];

/** A whole-number option (checked against its range by the CLI) as given, else its default. */
export function numberOption(options: StepOptions, name: NumberOptionName): number {
  const v = options.values[name];
  return Number(typeof v === 'string' ? v : STEP_OPTIONS[name].default);
}
