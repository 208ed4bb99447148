/**
 * Unknown option keys, shared by every area's option checks: a misspelt option (`period` for
 * `periodMs`, `synchronus`) would otherwise be ignored silently and its default used. Each area
 * throws its own typed error with the text this gives.
 */

/** The first key of `options` not in `known`, with "unknown option; did you mean …?" when one is near; undefined when all are known. */
export function unknownOptionKey(options: object, known: readonly string[]): { readonly key: string; readonly detail: string } | undefined {
  for (const key of Object.keys(options)) {
    if (known.includes(key)) continue;
    const nearest = nearestKey(key, known);
    return { key: key.slice(0, 100), detail: nearest === undefined ? 'unknown option' : `unknown option; did you mean ${nearest}?` };
  }
  return undefined;
}

/**
 * The known key nearest to a misspelt one, by edit distance (insertions, deletions, substitutions;
 * case ignored), only when close enough to be a plausible typo: within a third of its length, and
 * at least 2 edits allowed.
 */
export function nearestKey(key: string, known: readonly string[]): string | undefined {
  const typed = key.toLowerCase();
  let best: string | undefined;
  let bestDistance = Math.max(2, Math.ceil(typed.length / 3)) + 1;
  for (const candidate of known) {
    const distance = editDistance(typed, candidate.toLowerCase());
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}

/** Levenshtein distance, two rows; a key past 256 characters is no typo of an option name. */
function editDistance(a: string, b: string): number {
  if (a.length > 256 || b.length > 256) return Number.POSITIVE_INFINITY;
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1);
      current.push(Math.min(previous[j]! + 1, current[j - 1]! + 1, substitution));
    }
    previous = current;
  }
  return previous[b.length]!;
}
