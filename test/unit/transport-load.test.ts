// The transport loads under Node's own ESM loader, as bin/hardway.mjs runs it: there ssh2, a
// CommonJS package, offers only some names as named exports (vitest's loader offers them all).
import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');

describe('transport modules', () => {
  it('import under node + tsx (the CLI loader), not only under vitest', () => {
    const script = [
      "import { register } from 'tsx/esm/api';",
      'register();',
      `const t = await import(${JSON.stringify(resolve(ROOT, 'src/transport/index.ts'))});`,
      `await import(${JSON.stringify(resolve(ROOT, 'test/fixtures/ssh/test-server.ts'))});`,
      "console.log(typeof t.openTransport, typeof t.createTransport, typeof t.LocalTransport, typeof t.HostKeyError);",
    ].join('\n');
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: ROOT, encoding: 'utf8' });
    expect(out.trim()).toBe('function function function function');
  });
});
