// The sources, tests and benches type-check (tsc --noEmit, tsconfig.json): the CLI runs from an
// esbuild bundle or through tsx, neither of which checks types, and some rules are checked only by
// the compiler (the step table's options, src/steps/index.ts). A type error fails `npm test` here.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));

describe('type check', () => {
  it('tsc --noEmit finds no error in src/, test/, bench/ and scripts/', () => {
    const r = spawnSync(process.execPath, [`${root}node_modules/typescript/bin/tsc`, '--noEmit', '-p', root], { cwd: root, encoding: 'utf8' });
    expect(`${r.stdout}${r.stderr}`.trim(), 'tsc --noEmit reported errors').toBe('');
    expect(r.status).toBe(0);
  }, 180_000);
});
