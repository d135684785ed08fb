import { MAX_TIMER_MS } from "./schedule.js";

/**
 * A timer for any delay: setTimeout turns one past 2^31-1 ms (24.8 days) into 1 ms, and a
 * workflow may set 30 days, so a longer one waits in steps.
 */
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
