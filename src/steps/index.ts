// The step registry: every step of the step table (src/command-table.ts) by the name the user types
// with --only, the options it adds to the commands that run it (named there, declared in
// ./options.ts), and how to load it: the module ./<name>.ts, whose exported step has that name.
import type { Step } from '../engine/types.ts';
import type { StepOptionName } from './options.ts';
import { STEP_NAMES, type StepName } from '../command-table.ts';

export type { StepName } from '../command-table.ts';

/** A registered step: the options it adds to every command that runs it, and a lazy loader. */
export interface StepEntry {
  options?: readonly StepOptionName[];
  load(): Promise<Step>;
}

type DeclaredOption = { [K in StepName]: (typeof STEP_NAMES)[K] extends { options: readonly (infer O)[] } ? O : never }[StepName];
/** Compiles only when its argument is `true`. */
type MustHold<T extends true> = T;
/** A check at compile time: the step table sits below this folder and cannot name ./options.ts's type, so this fails to compile when it names an option ./options.ts does not declare. */
export type DeclaredOptionsAreKnown = MustHold<[DeclaredOption] extends [StepOptionName] ? true : false>;

/** The step src/steps/<name>.ts exports under any name (one whose `name` is `name`). */
async function loadStep(name: StepName): Promise<Step> {
  // Why a template: esbuild bundles every module of this folder as a chunk of its own for it, and
  // tsx and vitest resolve it at run time, so a new step needs no line here.
  const module: Record<string, unknown> = await import(`./${name}.ts`);
  const step = Object.values(module).find((v): v is Step => isStepNamed(v, name));
  if (!step) throw new Error(`src/steps/${name}.ts exports no step named "${name}"`);
  return step;
}

/** A step object (a name, a title, the machines it targets) of this name. */
function isStepNamed(v: unknown, name: StepName): v is Step {
  const s = v as Partial<Step> | null;
  return typeof s === 'object' && s !== null && s.name === name && typeof s.title === 'string' && typeof s.targets === 'function';
}

/** Every step hardway has, in the order of the step table. */
export const STEPS = Object.fromEntries((Object.keys(STEP_NAMES) as StepName[]).map((name): [StepName, StepEntry] => {
  const options = (STEP_NAMES[name] as { options?: readonly StepOptionName[] }).options;
  return [name, { ...(options ? { options } : {}), load: () => loadStep(name) }];
})) as Record<StepName, StepEntry>;
