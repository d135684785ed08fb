/** The longest delay setTimeout honours; a longer one fires after 1 ms (TimeoutOverflowWarning). */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** A timer for any delay: one past 2^31-1 ms (24.8 days) waits in steps, as the engine's timeouts do. */
export class LongTimer {
  #timer: NodeJS.Timeout | undefined;

  constructor(callback: () => void, ms: number) {
    this.#arm(callback, Math.max(ms, 0));
  }

  #arm(callback: () => void, remainingMs: number): void {
    const step = Math.min(remainingMs, MAX_TIMER_MS);
    this.#timer = setTimeout(() => (remainingMs > step ? this.#arm(callback, remainingMs - step) : callback()), step);
  }

  clear(): void {
    clearTimeout(this.#timer);
  }
}

/** A stop's deadline: it may be brought forward (a second signal makes it now), never put off. */
export class Deadline {
  #at = Infinity;
  #timer: LongTimer | undefined;
  #reach: () => void = () => undefined;
  readonly reached = new Promise<"deadline">((resolve) => (this.#reach = () => resolve("deadline")));

  /** Makes the deadline `ms` from now, unless it is sooner already. */
  within(ms: number): void {
    const at = performance.now() + ms;
    if (at >= this.#at) return;
    this.#at = at;
    this.#timer?.clear();
    this.#timer = new LongTimer(this.#reach, ms);
  }

  dispose(): void {
    this.#timer?.clear();
  }
}
