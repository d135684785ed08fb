import { AttemptTimeoutError } from "./errors.js";
import { MAX_TIMER_MS } from "./schedule.js";
import type { RecordAttemptContext } from "./task-record.js";
import type { Handler } from "./types.js";

type Settle = (context: RecordAttemptContext, ok: boolean, outcome: unknown) => void;

/**
 * Calls handlers and reports each attempt's outcome to `settle`, once. A promise's
 * outcome comes when it settles; a synchronous handler's (a value, or a throw) in a
 * microtask, as a promise's would. One microtask serves every attempt settled
 * meanwhile: no closure or microtask per task on the hot path.
 */
export class AttemptRunner {
  readonly #settle: Settle;
  /** Attempts whose handler returned or threw synchronously, waiting for #flush. */
  readonly #settled: RecordAttemptContext[] = [];

  constructor(settle: Settle) {
    this.#settle = settle;
  }

  /** Starts the attempt's timeout (if any) and its handler. */
  run(handler: Handler<unknown, unknown>, payload: unknown, context: RecordAttemptContext, timeoutMs: number): void {
    if (timeoutMs > 0) armTimeout(context, timeoutMs, timeoutMs);
    try {
      const outcome = handler(payload, context);
      // Reading `then` and calling it are inside the try: a hostile thenable fails the attempt, not the queue.
      if (typeof (outcome as PromiseLike<unknown> | null)?.then === "function") {
        (outcome as PromiseLike<unknown>).then(
          (value) => this.#settle(context, true, value),
          (error: unknown) => this.#settle(context, false, error),
        );
      } else {
        this.#later(context, true, outcome);
      }
    } catch (error) {
      this.#later(context, false, error);
    }
  }

  #later(context: RecordAttemptContext, ok: boolean, outcome: unknown): void {
    context.ok = ok;
    context.outcome = outcome;
    this.#settled.push(context);
    if (this.#settled.length === 1) queueMicrotask(this.#flush);
  }

  readonly #flush = (): void => {
    const settled = this.#settled;
    // Attempts started while flushing settle in this same loop, in order.
    for (let i = 0; i < settled.length; i++) {
      const context = settled[i]!;
      this.#settle(context, context.ok, context.outcome);
      context.outcome = undefined;
    }
    settled.length = 0;
  };
}

/**
 * Aborts the attempt `remainingMs` from now. setTimeout turns a delay past 2^31-1 ms (24.8
 * days) into 1 ms, so a longer timeout (up to the 30 days a file may set) waits in steps.
 */
function armTimeout(context: RecordAttemptContext, timeoutMs: number, remainingMs: number): void {
  const step = Math.min(remainingMs, MAX_TIMER_MS);
  context.timeoutTimer = setTimeout(() => {
    if (remainingMs > step) armTimeout(context, timeoutMs, remainingMs - step);
    else context.abort(new AttemptTimeoutError(timeoutMs));
  }, step);
}
