/**
 * The e2e project's global setup: gives this run its id (`PID-TIME`: a shared lab of another run is
 * never reused), takes down a shared lab a killed run left (and refuses to start beside a live run
 * that uses it), says whether the one-time builds are cached (the budget check allows for them),
 * and takes the shared lab down when the run ends, whatever happened, if this run made it.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { cacheRoot } from '../../../src/download/cache.ts';
import { claimShared, releaseShared } from './shared-lab.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The one-time builds this machine has not cached yet (rootfs, kubernetes, coredns): empty when warm. */
    coldCaches: string[];
  }
}

/** Which of the one-time builds are not in the user cache yet (each takes minutes on a fresh machine). */
export function coldCaches(env: NodeJS.ProcessEnv = process.env): string[] {
  const root = cacheRoot(env);
  const entries = (dir: string) => (existsSync(dir) ? readdirSync(dir) : []);
  // The lab's root is renamed into place whole; a finished build is a directory holding build.json.
  const rootfs = entries(root).some((f) => f.startsWith('rootfs-'));
  const built = (dir: string) => entries(join(root, dir)).some((f) => !f.startsWith('.') && existsSync(join(root, dir, f, 'build.json')));
  return [['rootfs', rootfs], ['kubernetes', built('kubernetes-build')], ['coredns', built('coredns-build')]]
    .filter(([, warm]) => !warm).map(([name]) => name as string);
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const runId = `${process.pid}-${Date.now()}`;
  project.provide('e2eRunId', runId);
  project.provide('coldCaches', coldCaches());
  await claimShared(runId);
  return () => releaseShared(runId);
}
