/** How many of the last opens judge the disk. */
const OPEN_TIMES_KEPT = 9;
/**
 * How long the last few log opens on taskq's main thread took, judged by their median once
 * there are enough of them for one: a few slow opens (a run's first, on code not yet
 * compiled, 0.2-0.3 ms on tmpfs where most take 30-60 us; or ones held up by the scheduler)
 * must not move logs to the thread pool, which costs a cheap open more than it saves. A
 * running mean did: of 1,000 tasks with logs on tmpfs, it sent 31 to 341 through the pool in
 * 5 of 11 runs measured. Judged by the median, none went in 5 runs.
 */
export class OpenTimes {
  readonly #times = new Float64Array(OPEN_TIMES_KEPT);
  readonly #sorted = new Float64Array(OPEN_TIMES_KEPT);
  #count = 0;
  #median = 0;

  add(ms: number): void {
    this.#times[this.#count++ % OPEN_TIMES_KEPT] = ms;
    const kept = Math.min(this.#count, OPEN_TIMES_KEPT);
    const sorted = this.#sorted.subarray(0, kept);
    sorted.set(this.#times.subarray(0, kept));
    sorted.sort();
    if (kept > OPEN_TIMES_KEPT >> 1) this.#median = sorted[kept >> 1] ?? 0;
  }

  /** 0 until more than half of OPEN_TIMES_KEPT opens are timed. */
  median(): number {
    return this.#median;
  }
}
