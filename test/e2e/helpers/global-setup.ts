/**
 * The e2e project's global setup: gives this run its id (a shared lab of another run is never
 * reused), takes down a shared lab a killed run left, says whether the one-time builds are cached
 * (the budget check allows for them), and takes the shared lab down when the run ends, whatever
 * happened.
 */
import { existsSync, readdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { downShared } from './shared-lab.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The one-time builds this machine has not cached yet (rootfs, kubernetes, coredns): empty when warm. */
    coldCaches: string[];
  }
}

/** Which of the one-time builds are not in the user cache yet (each takes minutes on a fresh machine). */
export function coldCaches(env: NodeJS.ProcessEnv = process.env): string[] {
  const root = join(env.XDG_CACHE_HOME?.startsWith('/') ? env.XDG_CACHE_HOME : join(homedir(), '.cache'), 'hardway');
  const has = (prefix: string) => existsSync(root) && readdirSync(root).some((f) => f.startsWith(prefix) && readdirSync(join(root, f)).length > 0);
  return [['rootfs', 'rootfs-'], ['kubernetes', 'kubernetes-build'], ['coredns', 'coredns-build']].filter(([, p]) => !has(p!)).map(([n]) => n!);
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  project.provide('e2eRunId', `${process.pid}-${Date.now()}`);
  project.provide('coldCaches', coldCaches());
  await downShared();
  return downShared;
}
