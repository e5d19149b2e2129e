// "Did you mean ...?": the names closest to what was typed, by edit distance (a swap of two
// neighbouring letters counts as one edit) or because the typed text starts them.

/** Edits (insert, delete, replace, swap of neighbours) between two strings. */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 0; j <= b.length; j++) d[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, d[i - 2]![j - 2]! + 1);
      d[i]![j] = best;
    }
  }
  return d[a.length]![b.length]!;
}

/** How many edits a typed word of this length may be away from a name and still be suggested. */
function tolerance(length: number): number {
  return length <= 4 ? 1 : length <= 9 ? 2 : 3;
}

/**
 * The candidates closest to `typed` (at most `max`, all equally close): within a few edits, or
 * started by it (3 letters or more). `aliases` maps other words people type (install) to a
 * candidate (up).
 */
export function closest(typed: string, candidates: readonly string[], aliases: Readonly<Record<string, string>> = {}, max = 3): string[] {
  const t = typed.toLowerCase();
  const scored: Array<[string, number]> = [];
  const consider = (word: string, target: string) => {
    const d = editDistance(t, word);
    const score = d <= tolerance(t.length) ? d : t.length >= 3 && word.startsWith(t) ? tolerance(t.length) + 0.5 : undefined;
    if (score === undefined) return;
    const seen = scored.find(([c]) => c === target);
    if (!seen) scored.push([target, score]);
    else seen[1] = Math.min(seen[1], score);
  };
  for (const c of candidates) consider(c, c);
  for (const [word, target] of Object.entries(aliases)) if (candidates.includes(target)) consider(word, target);
  const best = Math.min(...scored.map(([, s]) => s));
  // Equally close names keep the order they were given in (the command table's).
  return scored.filter(([, s]) => s === best).slice(0, max).map(([c]) => c);
}

/** `did you mean "a"?`, `did you mean "a" or "b"?`, or undefined when nothing is close. */
export function didYouMean(names: readonly string[], show: (name: string) => string = (n) => `"${n}"`): string | undefined {
  if (names.length === 0) return undefined;
  const shown = names.map(show);
  return `did you mean ${shown.length === 1 ? shown[0] : `${shown.slice(0, -1).join(', ')} or ${shown.at(-1)}`}?`;
}
