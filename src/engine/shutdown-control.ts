import { messageOf, TaskqError } from "../errors.js";
import type { ShutdownOptions, ShutdownResult } from "./options.js";
import { LongTimer } from "./long-timer.js";

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

  /**
   * Arms `hardStop` for when `options.deadline` passes or `options.signal` aborts. Returns
   * true, arming nothing, when that has happened already: the caller stops at once. Throws
   * INVALID_OPTION for a deadline that is not a time (NaN, an invalid Date).
   */
  watch(options: ShutdownOptions, hardStop: () => void): boolean {
    const ms = deadlineMs(options.deadline);
    const { signal } = options;
    if (signal?.aborted === true || ms <= 0) return true;
    if (ms !== Infinity) {
      const timer = new LongTimer(hardStop, ms);
      this.#cleanups.push(() => timer.clear());
    }
    if (signal !== undefined) {
      signal.addEventListener("abort", hardStop, { once: true });
      this.#cleanups.push(() => signal.removeEventListener("abort", hardStop));
    }
    return false;
  }

  /** Removes every timer and listener, then resolves the promise. */
  finish(result: ShutdownResult): void {
    for (const cleanup of this.#cleanups.splice(0)) cleanup();
    this.#resolve(result);
  }
}

/** Milliseconds from now to `deadline` (Infinity for none); throws INVALID_OPTION for one that is not a time. */
export function deadlineMs(deadline: number | Date | undefined): number {
  if (deadline === undefined) return Infinity;
  const ms = deadline instanceof Date ? deadline.getTime() - Date.now() : deadline;
  if (typeof ms !== "number" || Number.isNaN(ms)) {
    throw new TaskqError("INVALID_OPTION", `shutdown deadline must be a number of ms or a valid Date, got ${messageOf(deadline)}`);
  }
  return ms;
}
