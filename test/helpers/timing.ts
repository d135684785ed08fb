/**
 * The best of `rounds` (five unless told) timings of `times` calls of `a` and of `b`, the two alternating, in ms: a loaded
 * moment in one decides nothing. Timing assertions compare the two side by side, never against a fixed bound.
 */
export function bestOfAlternating(times: number, a: () => unknown, b: () => unknown, rounds = 5): [number, number] {
  const took = (work: () => unknown): number => {
    const started = performance.now();
    for (let run = 0; run < times; run++) work();
    return performance.now() - started;
  };
  const best: [number, number] = [Infinity, Infinity];
  for (let round = 0; round < rounds; round++) {
    best[0] = Math.min(best[0], took(a));
    best[1] = Math.min(best[1], took(b));
  }
  return best;
}
