/**
 * This process's CPU time in ms. Work done here is timed by it: what other processes take of a loaded machine's cores is
 * not counted, where on the wall clock a longer call is cut short by more of their turns than a shorter one (at load 10
 * the wall gave 40-60x for work that takes 10x of CPU). Vitest runs each test file in a process of its own (its forks pool).
 */
export const cpuTime = (): number => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};

/** The wall clock in ms, for what other processes do (a CLI spawned and waited for), which this process's CPU time does not see. */
export const wallTime = (): number => performance.now();

/**
 * The best of `rounds` (five unless told) timings of `times` calls of `a` and of `b`, the two alternating, in ms of `clock`
 * (this process's CPU time unless told): a loaded moment in one decides nothing. Timing assertions compare the two side by
 * side, never against a fixed bound.
 */
export function bestOfAlternating(times: number, a: () => unknown, b: () => unknown, rounds = 5, clock = cpuTime): [number, number] {
  const took = (work: () => unknown): number => {
    const started = clock();
    for (let run = 0; run < times; run++) work();
    return clock() - started;
  };
  const best: [number, number] = [Infinity, Infinity];
  for (let round = 0; round < rounds; round++) {
    best[0] = Math.min(best[0], took(a));
    best[1] = Math.min(best[1], took(b));
  }
  return best;
}
