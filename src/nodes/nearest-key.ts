/**
 * The known option key nearest to a misspelt one, for "unknown option; did you mean …?": by edit
 * distance (insertions, deletions, substitutions; case ignored), only when close enough to be a
 * plausible typo (at most a third of the key's length, and at least 2 edits allowed).
 */
export function nearestKey(key: string, known: readonly string[]): string | undefined {
  const typed = key.toLowerCase();
  let best: string | undefined;
  let bestDistance = Math.max(2, Math.floor(typed.length / 3)) + 1;
  for (const candidate of known) {
    const distance = editDistance(typed, candidate.toLowerCase());
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}

/** Levenshtein distance, two rows; keys are short (option names), so no cap is needed beyond theirs. */
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
