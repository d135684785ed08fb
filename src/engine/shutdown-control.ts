import type { ShutdownOptions, ShutdownResult } from "./options.js";
import { MAX_TIMER_MS } from "./schedule.js";

/**
 * The promise every shutdown() call returns, and the deadline timers and signal
 * listeners that may cut the drain short: all of them are removed when it settles.
 */
export class ShutdownControl {
  readonly promise: Promise<ShutdownResult>;
  #resolve!: (result: ShutdownResult) => void;
  readonly #cleanups: (() => void)[] = [];

  constructor() {
    this.promise = new Promise<ShutdownResult>((resolve) => (this.#resolve = resolve));
  }

  /** Calls `hardStop` when `options.deadline` passes or `options.signal` aborts. */
  watch(options: ShutdownOptions, hardStop: () => void): void {
    if (options.deadline !== undefined) {
      const ms = options.deadline instanceof Date ? options.deadline.getTime() - Date.now() : options.deadline;
      const timer = setTimeout(hardStop, Math.max(0, Math.min(ms, MAX_TIMER_MS)));
      this.#cleanups.push(() => clearTimeout(timer));
    }
    const { signal } = options;
    if (signal !== undefined) {
      if (signal.aborted) queueMicrotask(hardStop);
      else {
        signal.addEventListener("abort", hardStop, { once: true });
        this.#cleanups.push(() => signal.removeEventListener("abort", hardStop));
      }
    }
  }

  /** Removes every timer and listener, then resolves the promise. */
  finish(result: ShutdownResult): void {
    for (const cleanup of this.#cleanups.splice(0)) cleanup();
    this.#resolve(result);
  }
}
