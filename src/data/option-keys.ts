/**
 * Refusing option keys nobody reads: a misspelt option (`synchronus`, `reader`) would otherwise be
 * ignored silently and its default used. The error names the nearest known key.
 */
import { InvalidDataConfig } from './errors.js';

/** Throws InvalidDataConfig (`<scope>.<key>`) for the first key of `options` not in `known`. */
export function refuseUnknownKeys(scope: string, options: object, known: readonly string[]): void {
  for (const key of Object.keys(options)) {
    if (known.includes(key)) continue;
    const nearest = nearestKey(key, known);
    throw new InvalidDataConfig(`${scope}.${key}`, nearest === undefined ? 'unknown option' : `unknown option; did you mean ${nearest}?`);
  }
}

/** The known key closest to `key` by edit distance (case ignored), if any is within a third of its length (at least 2). */
export function nearestKey(key: string, known: readonly string[]): string | undefined {
  const wanted = key.toLowerCase();
  let best: string | undefined;
  let bestDistance = Math.max(2, Math.ceil(wanted.length / 3)) + 1;
  for (const candidate of known) {
    const distance = editDistance(wanted, candidate.toLowerCase());
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}

/** Levenshtein distance, one row at a time (option names are short). */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      row.push(Math.min(previous[j]! + 1, row[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1)));
    }
    previous = row;
  }
  return previous[b.length]!;
}
