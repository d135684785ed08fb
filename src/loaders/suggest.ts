/**
 * Edit distance between `a` and `b` (Levenshtein plus swaps of adjacent
 * characters, so "tset" is one edit from "test"), giving up with `limit + 1`
 * as soon as it must exceed `limit`: suggestions stay cheap on large workflows.
 */
export function editDistance(a: string, b: string, limit: number): number {
  if (Math.abs(a.length - b.length) > limit) return limit + 1;
  let before: number[] = [];
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let value = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) value = Math.min(value, before[j - 2]! + 1);
      current.push(value);
      rowMin = Math.min(rowMin, value);
    }
    if (rowMin > limit) return limit + 1;
    before = previous;
    previous = current;
  }
  return previous[b.length]!;
}

/**
 * The candidate closest to `word` (a case-only difference first), if it is close enough to be a likely typo:
 * one that keeps none of its characters (`c` for `y`, every one-letter id one edit from every other) is no slip of it.
 */
export function closestMatch(word: string, candidates: Iterable<string>): string | undefined {
  const limit = Math.max(1, Math.min(3, Math.ceil(word.length / 3)));
  const lower = word.toLowerCase();
  let best: string | undefined;
  let bestDistance = limit + 1;
  for (const candidate of candidates) {
    if (candidate === word) continue;
    const distance = candidate.toLowerCase() === lower ? 0 : editDistance(word, candidate, Math.min(limit, bestDistance));
    if (distance > 0 && distance >= Math.max(word.length, candidate.length)) continue;
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
      if (distance === 0) break;
    }
  }
  return best;
}

/** `; did you mean "x"?` when a close match exists, else "". */
export function didYouMean(word: string, candidates: Iterable<string>): string {
  const match = closestMatch(word, candidates);
  return match === undefined ? "" : `; did you mean "${match}"?`;
}
