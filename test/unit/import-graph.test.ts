// The import graph of src/: no cycle (type-only imports count), and nothing below the CLI imports
// from src/cli/ or src/commands/ (only src/cli.ts, src/cli/ and src/commands/ themselves do).
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = resolve(import.meta.dirname, '../../src');

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
}

/** Each module of src/ (relative path) -> the modules of src/ it imports or re-exports, type-only ones included. */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sources(SRC)) {
    const text = readFileSync(file, 'utf8');
    const specs = [...text.matchAll(/^\s*(?:import|export)\b[^'"]*?from\s+'(\.[^']+)'|^\s*import\s+'(\.[^']+)'|import\(\s*'(\.[^']+)'\s*\)/gm)].map((m) => m[1] ?? m[2] ?? m[3]!);
    graph.set(relative(SRC, file), specs.map((s) => relative(SRC, resolve(dirname(file), s))).filter((s) => !s.startsWith('..')));
  }
  return graph;
}

/** One cycle of the graph, as the modules around it, or undefined. */
function findCycle(graph: Map<string, string[]>): string[] | undefined {
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const visit = (n: string): string[] | undefined => {
    if (state.get(n) === 'done') return undefined;
    if (state.get(n) === 'open') return [...path.slice(path.indexOf(n)), n];
    state.set(n, 'open');
    path.push(n);
    for (const m of graph.get(n) ?? []) {
      const c = visit(m);
      if (c) return c;
    }
    path.pop();
    state.set(n, 'done');
    return undefined;
  };
  for (const n of graph.keys()) {
    const c = visit(n);
    if (c) return c;
  }
  return undefined;
}

describe('the import graph of src/', () => {
  const graph = importGraph();

  it('is read (every module, its relative imports)', () => {
    expect(graph.size).toBeGreaterThan(200);
    expect(graph.get('cli.ts')).toContain('commands/index.ts');
  });

  it('has no import cycle, type-only imports included', () => {
    expect(findCycle(graph)).toBeUndefined();
    // The finder finds one when there is one.
    expect(findCycle(new Map([['a.ts', ['b.ts']], ['b.ts', ['a.ts']]]))).toEqual(['a.ts', 'b.ts', 'a.ts']);
  });

  it('opens transports in one place: nothing outside src/transport/connector.ts (and open.ts, which it calls) makes one', () => {
    const makers = sources(SRC).filter((f) => !/transport\/(connector|open)\.ts$/.test(f))
      .filter((f) => /new (SshTransport|LocalTransport)\(|\b(openTransport|createTransport)\(/.test(readFileSync(f, 'utf8').replace(/^\s*(\/\/|\*).*$/gm, '')))
      .map((f) => relative(SRC, f));
    expect(makers).toEqual([]);
  });

  it('has no module below the CLI importing from src/cli/ or src/commands/', () => {
    const above = (m: string) => m === 'cli.ts' || m.startsWith('cli/') || m.startsWith('commands/');
    const wrong = [...graph].flatMap(([m, deps]) => (above(m) ? [] : deps.filter(above).map((d) => `${m} -> ${d}`)));
    expect(wrong).toEqual([]);
  });
});
