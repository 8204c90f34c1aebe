/**
 * "Did you mean …?" for unknown names: the closest candidate by edit distance (insertions,
 * deletions, substitutions and swaps of neighbours), if it is close enough to be a typo: at most
 * one edit for short names, two from five characters, three from nine.
 */
export function closestName(name: string, candidates: Iterable<string>): string | undefined {
  const limit = name.length >= 9 ? 3 : name.length >= 5 ? 2 : 1;
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of candidates) {
    if (candidate === name) continue;
    const distance = editDistance(name, candidate, limit);
    if (distance < bestDistance || (distance === bestDistance && best !== undefined && candidate < best)) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return bestDistance <= limit ? best : undefined;
}

/** ` (did you mean "x"?)` for the closest candidate, or the empty string. */
export function didYouMean(name: string, candidates: Iterable<string>, quote: (s: string) => string = (s) => `"${s}"`): string {
  const best = closestName(name, candidates);
  return best === undefined ? '' : ` (did you mean ${quote(best)}?)`;
}

/** Optimal-string-alignment distance, or limit + 1 as soon as it must exceed `limit`. */
function editDistance(a: string, b: string, limit: number): number {
  if (Math.abs(a.length - b.length) > limit) return limit + 1;
  let beforePrevious: number[] = [];
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, beforePrevious[j - 2]! + 1);
      current.push(d);
      rowMin = Math.min(rowMin, d);
    }
    if (rowMin > limit) return limit + 1;
    beforePrevious = previous;
    previous = current;
  }
  return previous[b.length]!;
}
