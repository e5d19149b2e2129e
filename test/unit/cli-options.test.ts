// Options that take a whole number are checked before anything runs: a bad value is a usage
// error (exit 2) naming the option and the range, and no inventory is even read.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';

describe('whole-number options', () => {
  const empty = mkdtempSync(join(tmpdir(), 'hardway-opts-'));
  for (const [args, message] of [
    [['up', '--api-timeout', 'abc'], '--api-timeout must be a whole number from 1 to 3600, got "abc"'],
    [['bootstrap-control-plane', '--api-timeout', '0'], '--api-timeout must be a whole number from 1 to 3600, got "0"'],
    [['pin-hosts', '--concurrency=-3'], '--concurrency must be a whole number from 1 to 1000, got "-3"'],
    [['verify', '--concurrency', '2.5'], '--concurrency must be a whole number from 1 to 1000, got "2.5"'],
  ] as const) {
    it(`hardway ${args.join(' ')} exits 2 before touching anything`, async () => {
      const run = await runCli([...args], empty);
      expect(run.code).toBe(2);
      expect(run.stderr).toBe(`error: ${message}\n`);
    });
  }
});
