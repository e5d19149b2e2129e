// A setup file of both projects: a Node process warning of a listener leak (MaxListenersExceededWarning,
// as `up` once printed from the direct HTTPS client) emitted while a test file runs fails that file.
import { afterAll } from 'vitest';

const leaks: string[] = [];
process.on('warning', (w) => {
  if (w.name === 'MaxListenersExceededWarning') leaks.push(w.message);
});

afterAll(async () => {
  // Node emits a warning on a later tick: let one pass.
  await new Promise((done) => setImmediate(done));
  if (leaks.length) throw new Error(`Node warned of a listener leak while this file ran:\n${leaks.join('\n')}`);
});
