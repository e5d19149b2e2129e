// Which lab a project directory belongs to: `lab up --dir DIR` records DIR, so a command run in DIR
// (doctor, lab break) knows its lab without --name.
import { realpathSync } from 'node:fs';
import type { LabPaths } from './names.ts';
import { listLabs, readState } from './state.ts';
import type { LabState } from './types.ts';

/** The state of the lab whose directory is `dir` (links resolved), if any. */
export function labOfDir(paths: LabPaths, dir: string): LabState | undefined {
  const here = real(dir);
  if (here === undefined) return undefined;
  for (const name of listLabs(paths)) {
    const state = readState(paths, name);
    if (state && real(state.plan.spec.dir) === here) return state;
  }
  return undefined;
}

function real(p: string): string | undefined {
  try {
    return realpathSync(p);
  } catch {
    return undefined;
  }
}
