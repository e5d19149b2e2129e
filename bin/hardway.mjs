#!/usr/bin/env node
// Entry point: loads the TypeScript sources through tsx so a fresh clone runs without a build step.
import { register } from 'tsx/esm/api';

register();
// A reader that goes away (`hardway ... | head`) is not an error of ours: stop quietly.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (e) => {
    if (e.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw e;
  });
}
const { main } = await import('../src/cli.ts');
process.exitCode = await main(process.argv.slice(2));
