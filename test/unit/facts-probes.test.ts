// Probe answers over a real shell (dash, /bin/sh here as on Debian machines): stdout byte for byte
// whatever its lines and trailing newlines, the exit code even when the command calls exit, and
// the answers after a multi-line one still in their place.
import { describe, expect, it } from 'vitest';
import { createFacts } from '../../src/engine/facts.ts';
import { shellProbe, TEST_PROBES } from './facts.helpers.ts';
import { sh } from '../../src/shell.ts';
import { LocalTransport } from '../../src/transport/local.ts';

describe('facts probes', () => {
  it('keep stdout exactly and the exit code, one line or many, in one batch', async () => {
    const facts = createFacts(new LocalTransport({ machine: 'jumpbox' }), undefined, { probes: TEST_PROBES });
    const got = await facts.ask({
      many: shellProbe.ask(sh`printf 'a\\nb\\n'`),
      noNewline: shellProbe.ask(sh`printf 'a\\nb'`),
      blankLines: shellProbe.ask(sh`printf 'a\\n\\n\\n'`),
      looksLikeHeader: shellProbe.ask(sh`printf '0 +\\n1 -\\n'`),
      one: shellProbe.ask(sh`echo one`),
      oneBare: shellProbe.ask(sh`printf one`),
      empty: shellProbe.ask(sh`true`),
      exits: shellProbe.ask(sh`printf 'x\\ny\\n'; exit 3`),
      fails: shellProbe.ask(sh`echo out; false`),
      last: shellProbe.ask(sh`echo still in place`),
    });
    expect(got).toEqual({
      many: { code: 0, stdout: 'a\nb\n' },
      noNewline: { code: 0, stdout: 'a\nb' },
      blankLines: { code: 0, stdout: 'a\n\n\n' },
      looksLikeHeader: { code: 0, stdout: '0 +\n1 -\n' },
      one: { code: 0, stdout: 'one\n' },
      oneBare: { code: 0, stdout: 'one' },
      empty: { code: 0, stdout: '' },
      exits: { code: 3, stdout: 'x\ny\n' },
      fails: { code: 1, stdout: 'out\n' },
      last: { code: 0, stdout: 'still in place\n' },
    });
  });
});
