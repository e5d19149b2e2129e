// Unified diffs for dry-run output (Myers' O(ND) algorithm), so no extra dependency is needed.

/** One line-level edit: kept, removed from the old text, or added in the new one. */
type Edit = { op: ' ' | '-' | '+'; line: string };

/** A unified diff of two texts (`--- a`, `+++ b`, `@@` hunks with `context` lines); '' if equal. */
export function unifiedDiff(oldText: string, newText: string, labels: { old: string; new: string }, context = 3): string {
  if (oldText === newText) return '';
  const a = splitLines(oldText);
  const b = splitLines(newText);
  const edits = diffLines(a, b);
  const out = [`--- ${labels.old}`, `+++ ${labels.new}`];
  for (const hunk of hunks(edits, context)) out.push(...hunk);
  return out.join('\n');
}

function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  else lines[lines.length - 1] += '\n\\ No newline at end of file';
  return lines;
}

/** Shortest edit script between two line arrays. */
function diffLines(a: string[], b: string[]): Edit[] {
  const n = a.length;
  const m = b.length;
  const max = n + m;
  const offset = max + 1;
  const v = new Int32Array(2 * max + 3);
  const trace: Int32Array[] = [];
  outer: for (let d = 0; d <= max; d++) {
    trace.push(v.slice());
    for (let k = -d; k <= d; k += 2) {
      let x = k === -d || (k !== d && v[offset + k - 1]! < v[offset + k + 1]!) ? v[offset + k + 1]! : v[offset + k - 1]! + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x++;
        y++;
      }
      v[offset + k] = x;
      if (x >= n && y >= m) break outer;
    }
  }
  // Walk the trace backwards to recover the edits.
  const edits: Edit[] = [];
  let x = n;
  let y = m;
  for (let d = trace.length - 1; d >= 0; d--) {
    const vd = trace[d]!;
    const k = x - y;
    const prevK = k === -d || (k !== d && vd[offset + k - 1]! < vd[offset + k + 1]!) ? k + 1 : k - 1;
    const prevX = d === 0 ? 0 : vd[offset + prevK]!;
    const prevY = prevX - prevK;
    while (x > prevX && y > prevY) edits.push({ op: ' ', line: a[--x]! }), y--;
    if (d > 0) {
      if (x === prevX) edits.push({ op: '+', line: b[--y]! });
      else edits.push({ op: '-', line: a[--x]! });
    }
  }
  return edits.reverse();
}

/** Groups edits into `@@ -l,s +l,s @@` hunks with `context` unchanged lines around each change. */
function hunks(edits: Edit[], context: number): string[][] {
  const result: string[][] = [];
  const changed = edits.map((e, i) => (e.op === ' ' ? -1 : i)).filter((i) => i >= 0);
  let i = 0;
  while (i < changed.length) {
    let start = Math.max(0, changed[i]! - context);
    let end = Math.min(edits.length, changed[i]! + context + 1);
    while (i + 1 < changed.length && changed[i + 1]! - context <= end) {
      i++;
      end = Math.min(edits.length, changed[i]! + context + 1);
    }
    i++;
    let oldLine = 1;
    let newLine = 1;
    for (let j = 0; j < start; j++) {
      if (edits[j]!.op !== '+') oldLine++;
      if (edits[j]!.op !== '-') newLine++;
    }
    const slice = edits.slice(start, end);
    const oldCount = slice.filter((e) => e.op !== '+').length;
    const newCount = slice.filter((e) => e.op !== '-').length;
    const range = (l: number, c: number) => `${c === 0 ? l - 1 : l},${c}`;
    result.push([`@@ -${range(oldLine, oldCount)} +${range(newLine, newCount)} @@`, ...slice.map((e) => e.op + e.line)]);
    start = end;
  }
  return result;
}
