#!/usr/bin/env node
// Entry point: runs the bundle in dist/cli when it was built from src/ as it is now (npm ci and
// npm run build make it), else loads the TypeScript sources through tsx, so a fresh clone or an
// edited source always runs the code in src/. HARDWAY_NO_BUNDLE=1 forces tsx.
import { fileURLToPath } from 'node:url';
import { missingPackageMessage } from './missing-package.mjs';
import { bundleIsCurrent } from './source-stamp.mjs';

// A reader that goes away (`hardway ... | head`) is not an error of ours: stop quietly.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (e) => {
    if (e.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw e;
  });
}
// Nothing hardway makes is writable by group or others, whatever umask it was started with (000
// would make 0777 directories); the code asks for the modes it wants, the umask only narrows them.
process.umask(process.umask() | 0o022);
const root = fileURLToPath(new URL('../', import.meta.url));
let cli;
try {
  if (process.env.HARDWAY_NO_BUNDLE !== '1' && bundleIsCurrent(root)) {
    cli = await import('../dist/cli/cli.js');
  } else {
    const { register } = await import('tsx/esm/api');
    register();
    cli = await import('../src/cli.ts');
  }
} catch (e) {
  // A fresh clone before `npm ci`: say so in one line instead of Node's stack trace.
  const message = missingPackageMessage(e, root);
  if (!message) throw e;
  console.error(message);
  process.exit(1);
}
process.exitCode = await cli.runProcess(process.argv.slice(2));
