/**
 * The name that was probably meant: the known name nearest a misspelt one. Apart from
 * known-options.ts, with no import, so that errors.ts (which known-options.ts builds on)
 * can use it too.
 */

/** Case, `_` and `-` do not count: `max_entries` and `MaxEntries` are near `maxEntries`. */
const fold = (name: string): string => name.toLowerCase().replace(/[_-]/g, '');

/**
 * The known name closest to `name` by edit distance (a transposition counts as one edit),
 * when it is within a third of the name's length (at least one edit); else undefined.
 */
export function nearestName(name: string, known: readonly string[]): string | undefined {
  const folded = fold(name);
  const limit = Math.max(1, Math.floor(folded.length / 3));
  let best: string | undefined;
  let bestDistance = limit + 1;
  for (const candidate of known) {
    const distance = editDistance(folded, fold(candidate));
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}

/** Optimal string alignment distance: insertions, deletions, substitutions and adjacent transpositions. */
export function editDistance(a: string, b: string): number {
  const rows: number[][] = [];
  for (let i = 0; i <= a.length; i++) {
    const row: number[] = [i];
    for (let j = 1; j <= b.length; j++) {
      if (i === 0) {
        row.push(j);
        continue;
      }
      const above = rows[i - 1] as number[];
      const substitution = (above[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1);
      let distance = Math.min((above[j] as number) + 1, (row[j - 1] as number) + 1, substitution);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        distance = Math.min(distance, ((rows[i - 2] as number[])[j - 2] as number) + 1);
      }
      row.push(distance);
    }
    rows.push(row);
  }
  return (rows[a.length] as number[])[b.length] as number;
}
