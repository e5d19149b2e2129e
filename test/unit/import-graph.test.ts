// The import graph of src/: no cycle (type-only imports count), neither between modules nor between
// folders (each folder of src/ and each module directly in src/ is one node), the folders stand in
// the layers docs/contributing.md draws, and nothing below the CLI imports from src/cli/ or
// src/commands/ (only src/cli.ts, src/cli/ and src/commands/ themselves do).
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = resolve(import.meta.dirname, '../../src');
const CONTRIBUTING = resolve(import.meta.dirname, '../../docs/contributing.md');

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

/** The node of a module in the folder graph: its top folder under src/ (`engine`), or the module itself (`inventory.ts`). */
function folderOf(module: string): string {
  return module.includes('/') ? module.slice(0, module.indexOf('/')) : module;
}

/** The folder graph: each folder or top-level module -> those it imports from, each with the module imports that make the edge. */
function folderGraph(graph: Map<string, string[]>): Map<string, Map<string, string[]>> {
  const folders = new Map<string, Map<string, string[]>>();
  for (const [module, deps] of graph) {
    const from = folderOf(module);
    const edges = folders.get(from) ?? folders.set(from, new Map()).get(from)!;
    for (const dep of deps.filter((d) => folderOf(d) !== from)) {
      const to = folderOf(dep);
      edges.set(to, [...(edges.get(to) ?? []), `${module} -> ${dep}`]);
    }
  }
  return folders;
}

/** A cycle between folders, said with one module import for each step around it, or undefined. */
function folderCycle(graph: Map<string, string[]>): string | undefined {
  const folders = folderGraph(graph);
  const cycle = findCycle(new Map([...folders].map(([f, edges]) => [f, [...edges.keys()]])));
  if (!cycle) return undefined;
  const steps = cycle.slice(1).map((to, i) => `${folders.get(cycle[i]!)!.get(to)![0]}`);
  return `${cycle.join(' -> ')} (${steps.join('; ')})`;
}

/**
 * The layers docs/contributing.md draws (its "## Layers" section: a line per layer, lowest first,
 * `N  folder/  module.ts ...`): each folder or module named -> its layer. What no line names is in layer 0.
 */
function drawnLayers(doc: string): Map<string, number> {
  const section = doc.slice(doc.indexOf('\n## Layers'));
  const block = section.slice(section.indexOf('```'), section.indexOf('```', section.indexOf('```') + 3));
  const layers = new Map<string, number>();
  for (const [, n, names] of block.matchAll(/^\s*(\d+)\s{2,}(.*)$/gm)) {
    for (const [, name] of names!.matchAll(/(?<![\w/.-])([a-z][a-z0-9-]*\/|[a-z][a-z0-9-]*\.ts)(?![\w/])/g)) layers.set(name!.replace(/\/$/, ''), Number(n));
  }
  return layers;
}

/** The module imports that do not go down the layers: from a folder to one in its own layer or above (layer 0's modules may import each other). */
function upwardImports(graph: Map<string, string[]>, layers: Map<string, number>): string[] {
  const layer = (node: string) => layers.get(node) ?? 0;
  return [...folderGraph(graph)].flatMap(([from, edges]) => [...edges].flatMap(([to, imports]) =>
    layer(to) < layer(from) || (layer(to) === 0 && layer(from) === 0) ? [] : [`${imports[0]} (layer ${layer(from)} imports layer ${layer(to)})`]));
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

  it('has no cycle between folders (each folder of src/, each module directly in src/), type-only imports included', () => {
    expect(folderCycle(graph)).toBeUndefined();
    // The finder names one when there is one, even where no module imports another in a circle.
    expect(folderCycle(new Map([['a/x.ts', ['b/y.ts']], ['b/y.ts', []], ['b/z.ts', ['a/w.ts']], ['a/w.ts', []]])))
      .toBe('a -> b -> a (a/x.ts -> b/y.ts; b/z.ts -> a/w.ts)');
    expect(folderCycle(new Map([['a/x.ts', ['b/y.ts']], ['b/y.ts', ['c.ts']], ['c.ts', []]]))).toBeUndefined();
  });

  it('stands in the layers docs/contributing.md draws: each folder imports only from the layers below its own', () => {
    const layers = drawnLayers(readFileSync(CONTRIBUTING, 'utf8'));
    const nodes = new Set([...graph.keys()].map(folderOf));
    // The drawing names real folders and modules, and enough of them to be a drawing.
    expect([...layers.keys()].filter((n) => !nodes.has(n))).toEqual([]);
    expect(layers.size).toBeGreaterThan(15);
    expect(upwardImports(graph, layers)).toEqual([]);
    // An import from a lower layer up to a higher one is named.
    expect(upwardImports(new Map([['a/x.ts', ['b/y.ts']], ['b/y.ts', []]]), new Map([['a', 1], ['b', 2]]))).toEqual(['a/x.ts -> b/y.ts (layer 1 imports layer 2)']);
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
