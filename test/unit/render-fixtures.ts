// Shared inputs and readers for the render tests (not a test file itself).
import { defaultSettings, type ClusterSettings } from '../../src/cluster-settings.ts';
import { parseInventory, type Inventory } from '../../src/inventory.ts';
import type { RenderedFile } from '../../src/render/machine.ts';

/** The example cluster of machines.txt. */
export const EXAMPLE = `
10.240.0.10 server.kubernetes.local server
10.240.0.20 node-0.kubernetes.local node-0 10.200.0.0/24
10.240.0.21 node-1.kubernetes.local node-1 10.200.1.0/24
`;
/** Three control planes and three workers, with names that contain each other. */
export const THREE_CP = `
10.240.0.11 cp-1.kubernetes.local cp-1
10.240.0.12 cp-2.kubernetes.local cp-2
10.240.0.13 cp-3.kubernetes.local cp-3
10.240.0.20 node-0.kubernetes.local node-0 10.200.0.0/24
10.240.0.21 node-1.kubernetes.local node-1 10.200.1.0/24
10.240.0.22 node-10.kubernetes.local node-10 10.200.10.0/24
`;

/** A parsed inventory with default settings, some overridden. */
export function inventory(text: string, settings: Partial<ClusterSettings> = {}): Inventory {
  return parseInventory(text, { ...defaultSettings(), ...settings }, { file: 'machines.txt', dir: '/x', clusterFile: '/x/cluster.yaml' });
}
/** The machine named `name`. */
export const host = (inv: Inventory, name: string) => inv.machines.find((m) => m.hostname === name)!;
/** The rendered file at `path`, or an error listing what was rendered. */
export const file = (files: RenderedFile[], path: string) => {
  const f = files.find((x) => x.path === path);
  if (!f) throw new Error(`not rendered: ${path} (have ${files.map((x) => x.path).join(', ')})`);
  return f;
};
/** The flags of a unit's ExecStart line, continuation lines joined. */
export const execFlags = (unit: string) =>
  /^ExecStart=(.*?[^\\])$/ms.exec(unit)![1]!.replace(/\\\n/g, ' ').trim().split(/\s+/).slice(1);
/** The value of --name=VALUE in a unit's ExecStart. */
export const flag = (unit: string, name: string) => execFlags(unit).find((f) => f.startsWith(`--${name}=`))?.slice(name.length + 3);

/**
 * A strict reader for the TOML subset the containerd templates use: comments, table headers with
 * bare, "double" or 'single' quoted keys, and key = string | integer | boolean | array of strings.
 * Anything else, or a table or key defined twice, is an error (what containerd would reject too).
 */
export function readToml(text: string): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  const seenTables = new Set<string>();
  let table = root;
  const KEY = String.raw`(?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*')`;
  const splitKeys = (s: string) => [...s.matchAll(new RegExp(KEY, 'g'))].map((m) => m[0].replace(/^["']|["']$/g, ''));
  const STRING = String.raw`(?:"[^"\\]*"|'[^']*')`;
  text.split('\n').forEach((raw, i) => {
    const line = raw.replace(/^\s+|\s+$/g, '');
    if (line === '' || line.startsWith('#')) return;
    const header = new RegExp(String.raw`^\[(${KEY}(?:\.${KEY})*)\]$`).exec(line);
    if (header) {
      const keys = splitKeys(header[1]!);
      const id = JSON.stringify(keys);
      if (seenTables.has(id)) throw new Error(`line ${i + 1}: table defined twice`);
      seenTables.add(id);
      table = root;
      for (const k of keys) table = (table[k] ??= {}) as Record<string, unknown>;
      return;
    }
    const kv = new RegExp(String.raw`^(${KEY})\s*=\s*(${STRING}|-?\d+|true|false|\[\s*(?:${STRING}\s*(?:,\s*${STRING}\s*)*)?\])$`).exec(line);
    if (!kv) throw new Error(`line ${i + 1}: not TOML this reader understands: ${raw}`);
    const key = splitKeys(kv[1]!)[0]!;
    if (key in table) throw new Error(`line ${i + 1}: key ${key} defined twice`);
    const v = kv[2]!;
    table[key] = v === 'true' ? true : v === 'false' ? false : /^-?\d+$/.test(v) ? Number(v)
      : v.startsWith('[') ? [...v.matchAll(new RegExp(STRING, 'g'))].map((m) => m[0].slice(1, -1)) : v.slice(1, -1);
  });
  return root;
}
/** The value at a path of keys in a parsed document. */
export const at = (obj: unknown, ...path: string[]) => path.reduce<unknown>((o, k) => (o as Record<string, unknown> | undefined)?.[k], obj);
