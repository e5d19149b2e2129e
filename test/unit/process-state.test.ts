// Process-wide state is listed in one place: every module-level `let` of src/, and every Map, Set,
// WeakMap, WeakSet or AbortController a module makes empty at its top level (a cache or a registry
// filled as the process runs), is a row of the table under "Process-wide state" in
// docs/contributing.md, which says why it is safe; and every row is still in the code.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const SRC = join(ROOT, 'src');

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
}

/** The names a module's text binds to mutable state at its top level (column 0: nested code is indented). */
function moduleState(text: string): string[] {
  const lets = [...text.matchAll(/^(?:export )?(?:let|var) ([A-Za-z_$][\w$]*)/gm)].map((m) => m[1]!);
  const empties = [...text.matchAll(/^(?:export )?const ([A-Za-z_$][\w$]*)[^=\n]*= *new (?:Map|Set|WeakMap|WeakSet|AbortController)\b(?:<[^\n]*?>)?\(\)/gm)].map((m) => m[1]!);
  const literals = [...text.matchAll(/^(?:export )?const ([A-Za-z_$][\w$]*)[^=\n]*= *(?:\[\]|\{\}) *;/gm)].map((m) => m[1]!);
  return [...lets, ...empties, ...literals];
}

/** `module name` of every row of the table in docs/contributing.md's "Process-wide state". */
function listedState(doc: string): string[] {
  const section = doc.slice(doc.indexOf('\n## Process-wide state'));
  const end = section.indexOf('\n## ', 1);
  return [...(end > 0 ? section.slice(0, end) : section).matchAll(/^\| `(src\/[^`]+)` \| ([^|]+)\|/gm)]
    .flatMap((m) => [...m[2]!.matchAll(/`([^`]+)`/g)].map((n) => `${m[1]} ${n[1]}`));
}

describe('process-wide state', () => {
  it('finds state at the top of a module, not constants nor what a function holds', () => {
    const text = [
      'let count = 0;', 'export let last: string | undefined;', 'const cache = new Map<string, number[]>();',
      'const seen = new Set<string>();', 'const stop = new AbortController();', 'const rows: string[] = [];',
      "const WORDS = new Set(['a', 'b']);", 'const TABLE: ReadonlyMap<string, number> = new Map(entries);',
      'function f() {', '  let local = 1;', '  const memo = new Map();', '}',
    ].join('\n');
    expect(moduleState(text)).toEqual(['count', 'last', 'cache', 'seen', 'stop', 'rows']);
  });

  it('is each listed in docs/contributing.md with why it is safe, and each listed one is in the code', () => {
    const found = sources(SRC).flatMap((file) => moduleState(readFileSync(file, 'utf8')).map((name) => `src/${relative(SRC, file)} ${name}`)).sort();
    const listed = listedState(readFileSync(join(ROOT, 'docs/contributing.md'), 'utf8')).sort();
    expect(listed.length).toBeGreaterThan(5);
    expect(found).toEqual(listed);
  });
});
