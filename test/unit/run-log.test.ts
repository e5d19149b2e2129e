// The run log: entries written together once per turn of the event loop (not one write each), in
// order, on disk by the next turn (the kill suite follows the file as it grows) and at close.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openRunLog } from '../../src/ui/run-log.ts';
import { Redactor } from '../../src/ui/redact.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('the run log', () => {
  it('holds every entry in order by the next turn of the event loop, redacted, and all of them after close', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hardway-runlog-'));
    dirs.push(dir);
    const redactor = new Redactor();
    redactor.add('c2VjcmV0LXNlY3JldC1zZWNyZXQ=');
    const log = openRunLog(dir, 'up', redactor);
    log.write('first', 'node-0');
    log.write('key c2VjcmV0LXNlY3JldC1zZWNyZXQ= and\nsecond line', 'node-1');
    const entries = () => readFileSync(log.path, 'utf8').split('\n').filter((l) => /^\d{4}-/.test(l)).map((l) => l.replace(/^\S+ /, ''));
    await new Promise((ok) => setImmediate(ok));
    expect(entries()).toEqual(['node-0: first', 'node-1: key [REDACTED] and']);
    log.write('third');
    log.close();
    expect(entries()).toEqual(['node-0: first', 'node-1: key [REDACTED] and', 'third']);
    expect(readFileSync(log.path, 'utf8')).toMatch(/\n {2,}second line\n/);
    log.write('after close'); // ignored, as before
    expect(entries()).toHaveLength(3);
  });
});
