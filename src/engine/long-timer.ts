import { MAX_TIMER_MS } from "./schedule.js";

/**
 * A timer for any delay: setTimeout turns one past 2^31-1 ms (24.8 days) into 1 ms, and a
 * workflow (or a flag: --shutdown-timeout, --kill-grace) may set 30 days, so a longer one waits
 * in steps. `unref`: it does not keep the process alive, as setTimeout(...).unref().
 */
export class LongTimer {
  #timer: NodeJS.Timeout | undefined;
  readonly #unref: boolean;

  constructor(callback: () => void, ms: number, options: { unref?: boolean } = {}) {
    this.#unref = options.unref === true;
    this.#arm(callback, Math.max(ms, 0));
  }

  #arm(callback: () => void, remainingMs: number): void {
    const step = Math.min(remainingMs, MAX_TIMER_MS);
    this.#timer = setTimeout(() => (remainingMs > step ? this.#arm(callback, remainingMs - step) : callback()), step);
    if (this.#unref) this.#timer.unref();
  }

  clear(): void {
    clearTimeout(this.#timer);
  }
}
