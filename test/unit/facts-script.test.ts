// The facts script is a shell program in a file of its own (src/engine/facts.sh): POSIX sh must
// parse it, and the Command the engine runs is that file's text.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { FACTS_SCRIPT } from '../../src/engine/facts.ts';

const FILE = new URL('../../src/engine/facts.sh', import.meta.url);

describe('src/engine/facts.sh', () => {
  it('parses with sh -n (and with dash, the /bin/sh of Debian machines)', () => {
    execFileSync('sh', ['-n', FILE.pathname]);
    execFileSync('dash', ['-n', FILE.pathname]);
  });

  it('is the script the engine runs, byte for byte', () => {
    expect(FACTS_SCRIPT.text).toBe(readFileSync(FILE, 'utf8'));
  });
});
