// The CLIs a bench measures: this checkout's, and with `--baseline DIR` another checkout's
// bin/hardway.mjs beside it, run on the same lab so load and cache effects fall on both alike.
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { bundleIsCurrent } from '../../bin/source-stamp.mjs';
import { HARDWAY } from './run.ts';

/** A CLI to measure: its name in the report and its entry point. */
export interface Cli {
  name: string;
  entry: string;
  /** Another project directory for the same lab (the same machines reached as another user). */
  dir?: string;
}

/** The CLI of this checkout. */
export const THIS_CLI: Cli = { name: 'this checkout', entry: HARDWAY };

/** This checkout's CLI, then the one of the checkout at `baseline` when given; a baseline without bin/hardway.mjs is refused. */
export function clisWithBaseline(baseline: string | undefined): Cli[] {
  if (baseline === undefined) return [THIS_CLI];
  const entry = join(resolve(baseline), 'bin/hardway.mjs');
  if (!existsSync(entry)) throw new Error(`--baseline ${baseline}: no ${entry}; give the directory of another hardway checkout (with node_modules, built with node scripts/build.mjs)`);
  return [THIS_CLI, { name: `baseline ${baseline}`, entry }];
}

/** How a checkout's CLI starts: its bundle in dist/cli, or tsx (slower) when the bundle is missing or stale. */
export function loaderOf(cli: Cli): string {
  return bundleIsCurrent(join(cli.entry, '../../')) ? 'bundle in dist/cli' : 'tsx (no current bundle: node scripts/build.mjs there)';
}
